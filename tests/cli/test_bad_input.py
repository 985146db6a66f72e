"""A battery of bad input for every command that reads a file or a number: attn's
probe, verify, train, diff, tokenize, export-checkpoint, judge, bench, and the
command-line judges tools/judge.py and tools/judge.mjs.

Each row of CASES is one run: the program, its arguments (with {fixture} names
filled in from files this test makes, one defect each), the exit status it must
give and a pattern its one line on stderr must match. Every row is held to:

- the status it names, and never a signal, a hang (each run has TIMEOUT seconds)
  or text that means a crash (a traceback, "terminate called", a sanitizer report);
- exit 2: exactly one line on stderr, "attn: ..." ("judge: ..." for the judges),
  that matches the pattern (it names what is wrong and what to do);
- exit 0 or 1 with a pattern: that one line (a warning) on stderr, and where the
  row gives `out`, that pattern on stdout (a failed check, the first value that is
  not finite);
- afterwards, nothing half-written: no TARGET.partial-PID left anywhere, and the
  files a failing command was asked to write over (keep.json, keep/) unchanged.

The classes:
  nonfinite  weights or outputs that are NaN or infinite never pass, and are named
  limits     what a command cannot do is refused before the work: an output it
             cannot write, a run that will not fit in memory, a text too small, a
             FIFO or device as an input, a context past what the model was trained on
  parsing    every input parsed once, with what and where: JSON types, UTF-8,
             duplicate tensors, tokenizers, token lists, byte counts
  writing    a command that fails leaves its target as it was

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_bad_input.py
Standard library only; the judge.mjs rows need node and the wasm build
($ANATOMY_WASM_DIR or build/wasm/wasm) and are skipped, with a line saying so,
where either is missing.
"""

import collections
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_cli import ATTN, CRASH_MARKERS, REPO, read_safetensors, write_safetensors  # noqa: E402

PYTHON = os.environ.get("ANATOMY_PYTHON", "/usr/bin/python3")
NODE = shutil.which("node")
WASM_DIR = os.environ.get("ANATOMY_WASM_DIR", os.path.join(REPO, "build", "wasm", "wasm"))
TIMEOUT = 120  # seconds a run may take (the sanitizer build is several times slower)

# program: "attn", "judge.py" or "judge.mjs"; args: a list, each formatted with the
# fixtures; status: the exit status; line: a pattern for the one stderr line (None:
# stderr must be empty); out: a pattern stdout must match (or None); stdin: text.
Case = collections.namedtuple("Case", "cls program args status line out stdin", defaults=(None, None))

NAN = r"(nan|NaN)"


def attn(cls, args, status, line, out=None, stdin=None):
    return Case(cls, "attn", args, status, line, out, stdin)


CASES = [
    # ---- non-finite values: never a pass, and named ------------------------------------
    attn("nonfinite", ["probe", "--model", "{nan_q}"], 1, r"^attn: warning: checkpoint '.*nan_q' holds 1 weight that is not finite \(the first: model\.layers\.0\.self_attn\.q_proj\.weight \[0, 5\] = nan\)",
         r"(?s)p1 .*inf .*FAIL.*4 of 4 checks FAILED\.\nThe first value of the pass that is not finite: layers\.0\.probs"),
    attn("nonfinite", ["probe", "--model", "{nan_embed}"], 1, r"holds 32 weights that are not finite \(the first: model\.embed_tokens\.weight \[5, 0\] = nan\)",
         r"4 of 4 checks FAILED"),
    attn("nonfinite", ["probe", "--model", "{inf_norm}"], 1, r"holds 1 weight that is not finite \(the first: model\.layers\.1\.input_layernorm\.weight \[0\] = inf\)",
         r"4 of 4 checks FAILED"),
    attn("nonfinite", ["probe", "--model", "{huge}"], 1, None, r"(?s)4 of 4 checks FAILED\.\nThe first value of the pass that is not finite: layers\.\d\.probs"),
    attn("nonfinite", ["probe", "--model", "{nan_bf16}", "--dtype", "bfloat16"], 1, r"not finite \(the first: model\.layers\.0\.mlp\.down_proj\.weight", r"checks FAILED"),
    attn("nonfinite", ["probe", "--model", "{nan_llama2c}", "--tokenizer", "{llama2c_tokenizer}", "--tokens", "1,2", "--generate", "2"], 1,
         r"^attn: warning: checkpoint '.*model\.bin' holds 1 weight that is not finite \(the first: model\.norm\.weight \[3\] = nan\)", r"checks FAILED"),
    attn("nonfinite", ["probe", "--model", "{nan_q}", "--output", "{trace_out}"], 1, r"not finite", r"(?s)checks FAILED.*Trace written to"),
    attn("nonfinite", ["verify", "--checkpoint", "{nan_q}"], 1, r"^attn: warning: checkpoint '.*nan_q' holds 1 weight that is not finite",
         r"(?s)e1 +rows_sum_to_one +inf .*FAIL.*e2 .*FAIL.*e3 .*FAIL.*h1 .*inf .*FAIL.*The first value of the pass that is not finite: layers\.0\.q \[0, 0, 0, 0\] = nan"),
    attn("nonfinite", ["verify", "--checkpoint", "{nan_embed}"], 1, r"not finite", r"(?s)h2 +shared_kv_heads_differ +inf .*FAIL.*first value of the pass that is not finite: layers\.0\.input"),
    attn("nonfinite", ["verify", "--checkpoint", "{inf_norm}"], 1, r"= inf\)", r"checks FAILED"),
    attn("nonfinite", ["verify", "--checkpoint", "{huge}"], 1, None, r"(?s)e1 +rows_sum_to_one +inf .*FAIL.*first value of the pass that is not finite: layers\.0\.ffn_out .* = -?inf"),
    attn("nonfinite", ["verify", "--checkpoint", "{nan_q}", "--export-trace", "{trace_out}"], 1, r"not finite", r"(?s)checks FAILED.*Trace written to"),
    attn("nonfinite", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2,3", "--theirs", "{theirs_nan}"], 1, None,
         r"(?s)logits +float32 +inf +inf .*DIVERGES \(1 value\).*First divergence: logits, sequence 0, position 1, token 8: ours -?[0-9.e-]+, theirs nan"),
    attn("nonfinite", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2,3", "--theirs", "{theirs_inf}"], 1, None, r"theirs -?inf"),
    attn("nonfinite", ["diff", "--checkpoint", "{nan_q}", "--tokens", "1,2,3", "--theirs", "{theirs_nan_all}"], 1, r"not finite",
         r"(?s)logits .*inf .*DIVERGES.*ours nan, theirs nan"),
    attn("nonfinite", ["diff", "--checkpoint", "{nan_q}", "--tokens", "1,2,3", "--theirs", "{theirs_nan_all}", "--json"], 1, r"not finite",
         r'"max_abs_error": null'),
    attn("nonfinite", ["judge", "softmax", "--outputs", "-"], 1, None, r'"problem":"nonfinite"',
         stdin='[{"value": "NaN"}, {"value": "Infinity"}, {"value": [["NaN"]]}, {"value": [["-Infinity"]]}]'),
    attn("nonfinite", ["judge", "attentionFlops", "--outputs", "-"], 1, None, r'"passed":false', stdin='[{"value": "NaN"}, {"value": "NaN"}, {"value": "NaN"}]'),

    # ---- limits checked before the work -----------------------------------------------
    # attn train: the output
    attn("limits", ["train", "--text", "{text}", "--out", "{keep_json}", "--steps", "2"], 2, r"^attn: '.*keep\.json' is a file, not a folder"),
    attn("limits", ["train", "--text", "{text}", "--out", "{keep_json}/model", "--steps", "2"], 2, r"^attn: cannot write '.*keep\.json/model': a part of its path is a file"),
    attn("limits", ["train", "--text", "{text}", "--out", "", "--steps", "2"], 2, r"^attn: an output folder name is empty"),
    attn("limits", ["train", "--text", "{text}", "--out", "{keep_dir}", "--steps", "2"], 2, r"already exists and is not empty; give a new folder"),
    attn("limits", ["train", "--text", "{text}", "--out", "{unwritable}/model", "--steps", "2"], 2, r"^attn: cannot (create the folder|write)"),
    # attn train: memory, before any step
    attn("limits", ["train", "--text", "{text}", "--out", "{fresh}", "--context", "4096", "--batch", "65536"], 2,
         r"^attn: this run needs about [0-9.]+ (GB|TB) of memory \(.*attention maps.*\); this machine has [0-9.]+ GB for it: use a smaller --context, --batch or --threads"),
    attn("limits", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"hidden_size": 65536, "intermediate_size": 262144}}'], 2,
         r"^attn: this run needs about .* weights and optimizer state\); this machine has"),
    # attn train: a text too small for what the run needs
    attn("limits", ["train", "--text", "{one_character_text}", "--out", "{fresh}", "--steps", "2"], 2,
         r"^attn: the text has 1 distinct character: measuring induction heads needs a string of at least 2 different characters"),
    attn("limits", ["train", "--text", "{text}", "--out", "{fresh}", "--steps", "2", "--context", "4"], 2, r"context of at least 5"),
    attn("limits", ["train", "--text", "{short_text}", "--out", "{fresh}", "--steps", "2"], 2, r"held-out last tenth .* is shorter than one window of 64"),
    # attn train: inputs that are not files
    attn("limits", ["train", "--text", "{fifo}", "--out", "{fresh}", "--steps", "2"], 2, r"^attn: '.*fifo' is not a regular file \(a device, a FIFO or a socket\): give a file"),
    attn("limits", ["train", "--text", "/dev/zero", "--out", "{fresh}", "--steps", "2"], 2, r"^attn: '/dev/zero' is not a regular file"),
    attn("limits", ["train", "--text", "/dev/urandom", "--out", "{fresh}", "--steps", "2"], 2, r"^attn: '/dev/urandom' is not a regular file"),
    attn("limits", ["train", "--text", "{root}", "--out", "{fresh}", "--steps", "2"], 2, r"is a folder: give a file"),
    attn("limits", ["train", "--text", "{text}", "--out", "{fresh}", "--steps", "2", "--config", "{fifo}"], 2, r"is not a regular file"),
    # the other readers
    attn("limits", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{fifo}"], 2, r"^attn: '.*fifo' is not a regular file"),
    attn("limits", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "/dev/zero"], 2, r"^attn: '/dev/zero' is not a regular file"),
    attn("limits", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "/dev/urandom"], 2, r"^attn: '/dev/urandom' is not a regular file"),
    attn("limits", ["probe", "--model", "{fifo_folder}"], 2, r"config\.json' is not a regular file"),
    attn("limits", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{fifo}"], 2, r"is not a regular file"),
    attn("limits", ["probe", "--model", "{llama2c_model}", "--tokenizer", "/dev/zero"], 2, r"'/dev/zero' is not a regular file"),
    attn("limits", ["probe", "--model", "{fifo}"], 2, r"is neither a folder nor a file"),
    attn("limits", ["tokenize", "--tokenizer", "{fifo}", "abc"], 2, r"is not a regular file"),
    attn("limits", ["tokenize", "--tokenizer", "{tiny}/tokenizer.json", "--batch", "/dev/zero"], 2, r"'/dev/zero' is not a regular file"),
    attn("limits", ["judge", "softmax", "--outputs", "{fifo}"], 2, r"is not a regular file"),
    attn("limits", ["judge", "softmax", "--outputs", "/dev/urandom"], 2, r"is not a regular file"),
    attn("limits", ["judge", "softmax", "--outputs", "-"], 2, r"^attn: standard input is larger than the 67\.1 MB this command reads", stdin="ZEROS"),
    # a context past the positions a checkpoint was trained on: warned, then run
    attn("limits", ["probe", "--model", "{short_context}"], 0, r"^attn: warning: this run reaches \d+ positions, past the 8 that '.*short_context' was trained on"),
    attn("limits", ["probe", "--model", "{short_context}", "--tokens", "1,2,3", "--generate", "20"], 0, r"reaches 22 positions, past the 8"),
    attn("limits", ["verify", "--checkpoint", "{short_context}", "--tokens", "1,2,3,4,5,6,7,8,9"], 0, r"reaches 9 positions, past the 8"),
    attn("limits", ["diff", "--checkpoint", "{short_context}", "--tokens", "1,2,3,4,5,6,7,8,9,10", "--theirs", "{theirs_ten}"], 1, r"reaches 10 positions, past the 8", r"DIVERGES"),
    attn("limits", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{llama2c_tokenizer}", "--tokens", "1,2", "--generate", "40"], 0, r"reaches 41 positions, past the 32 that"),
    attn("limits", ["probe", "--model", "{short_context}", "--tokens", "1,2,3", "--generate", "6"], 0, None),  # 8 positions: no warning
    # --head-patterns on the project's own tiny export: its 32 ids hold 29 for the induction string
    attn("limits", ["probe", "--model", "{tiny}", "--head-patterns"], 0, None, r"induction on BOS \+ 29 random ids written twice"),
    # the benchmarks: the reference's [B, Hq, T, T] maps must fit before any kernel runs
    attn("limits", ["bench", "memory", "--reference-t", "1048576", "--streaming-t", "8"], 2,
         r"^attn: the reference at T = 1048576 needs about 422 TB of memory \(three \[1, 32, T, T\] float32 maps\); this machine has .* give a smaller --reference-t$"),
    attn("limits", ["bench", "cpu", "--reference-max-t", "100000", "--prefill", "65536", "--no-peers"], 2,
         r"the reference at T = 65536 needs about 1\.65 TB of memory"),
    # export-checkpoint: a model that cannot be made here
    attn("limits", ["export-checkpoint", "{fresh}", "--config", "tinyllama-1.1b", "--layers", "1000"], 2, r"^attn: .*memory"),

    # ---- inputs parsed once, with what and where ------------------------------------------
    # JSON: types and numbers past double's range
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"hidden_size": "64"}}'], 2, r'^attn: --config: hidden_size must be a whole number, not a string \("64"\)'),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"hidden_size": 1e400}}'], 2, r"^attn: --config is not valid JSON: number overflow parsing '1e400'"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"rms_norm_eps": 1e999}}'], 2, r"number overflow parsing '1e999'"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"rms_norm_eps": "small"}}'], 2, r"rms_norm_eps must be a number, not a string"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"num_hidden_layers": 2.5}}'], 2, r"num_hidden_layers must be a whole number, not a number \(2\.5\)"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"hidden_act": 3}}'], 2, r"hidden_act must be a string"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '{{"num_hidden_layers": 99999999999}}'], 2, r"out of range"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", '[1, 2]'], 2, r"must be a JSON object of config\.json keys, not a list"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", "{config_file_bad}"], 2, r"config_bad\.json is not valid JSON: parse error at line 1"),
    # --config: train's is JSON keys or a file, verify's and export-checkpoint's a preset's name
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", "null"], 2,
         r"""^attn: --config takes config\.json keys as a JSON object, e\.g\. '\{"hidden_size": 64\}', or a file holding one; 'null' is neither \(no file has that name\)$"""),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", "{missing}"], 2, r"--config takes config\.json keys .*'.*missing' is neither"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", "{root}"], 2, r"is a folder: give a file"),
    attn("parsing", ["verify", "--config", "null"], 2, r"^attn: unknown --config 'null' \(known: tiny, tinyllama-1\.1b, stories260k"),
    attn("parsing", ["export-checkpoint", "{fresh}", "--config", "null"], 2, r"^attn: unknown --config 'null' \(known: tiny, tinyllama-1\.1b, stories260k"),
    attn("parsing", ["verify", "--checkpoint", "{config_string}"], 2, r"config\.json: field 'hidden_size' must be an integer"),
    attn("parsing", ["verify", "--checkpoint", "{config_1e400}"], 2, r"config\.json is not valid JSON: number overflow parsing '1e400'"),
    attn("parsing", ["probe", "--model", "{config_1e400}"], 2, r"number overflow parsing '1e400'"),
    attn("parsing", ["probe", "--model", "{config_bad_utf8}"], 2, r"config\.json is not valid JSON: .*UTF-8.*\\x[0-9A-F]{2}"),
    attn("parsing", ["probe", "--model", "{config_list}"], 2, r"config\.json must be a JSON object"),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r"^attn: standard input is not valid JSON: number overflow parsing '1e400'", stdin="[1e400]"),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r"number overflow parsing '1e999'", stdin='[{"value": [[1e999]]}, 1, 2, 3]'),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r"standard input is not valid JSON: .*UTF-8", stdin=b'[{"value": "\xff"}]'),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r"is not valid JSON: parse error", stdin=""),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r"expected 4 outputs for softmax", stdin='{"value": 1}'),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 1, None, r'"message":"the result holds \\"64\\", which is not a number',
         stdin='[{"value": "64"}, {"value": [1]}, {"error": "ReferenceError: x is not defined"}, {"value": null}]'),
    # judge: outputs of another structure than one {"value"} or {"error": "..."} per case, refused before any case is judged
    attn("parsing", ["judge", "softmax", "--outputs", "{outputs_numbers}"], 2,
         r'^attn: judge: output 1 of 4 for softmax \(case "3 rows of 5"\) is a number \(1\); expected \{"value": an array of shape \[3, 5\]\} or \{"error": "message"\}$'),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r'^attn: judge: output 3 of 4 for softmax \(case "4 rows of 7 with a wide spread"\) is an object with neither "value" nor "error"; expected \{"value": an array of shape \[4, 7\]\}',
         stdin='[{"value": [[1]]}, {"error": "stopped"}, {}, {"value": 2}]'),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r'output 1 of 4 .* is an object whose "error" is a number \(5\), not a string', stdin='[{"error": 5}, 2, 3, 4]'),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r'output 2 of 4 .* is null; expected', stdin='[{"value": 1}, null, 3, 4]'),
    attn("parsing", ["judge", "attentionFlops", "--outputs", "-"], 2, r'output 1 of 3 .* expected \{"value": an object with fields projections, scores, weighted\}', stdin="[1, 2, 3]"),
    attn("parsing", ["judge", "softmax", "--outputs", "-"], 2, r"expected 4 outputs for softmax \(a list, one per case, .*\), not a list of 1$", stdin="[1]"),
    attn("parsing", ["judge", "softmax", "--outputs", "{outputs_1e400}"], 2, r"outputs_1e400\.json is not valid JSON: number overflow"),
    attn("parsing", ["judge", "softmax", "--outputs", "{outputs_deep}"], 2, r"outputs_deep\.json nests lists and objects 200002 deep; at most 100 are read"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--config", "{config_deep}"], 2, r"nests lists and objects \d+ deep"),
    attn("parsing", ["tokenize", "--tokenizer", "{tiny}/tokenizer.json", "--batch", "{outputs_deep}"], 2, r"nests lists and objects"),
    attn("parsing", ["judge", "nope", "--cases"], 2, r"nope"),
    # UTF-8: prompts, texts and tokenizer pieces
    attn("parsing", ["probe", "--model", "{tiny}", "--prompt", b"The \xff cat"], 2, r"^attn: the text is not UTF-8: byte 0xFF at offset 4$"),
    attn("parsing", ["probe", "--model", "{tiny}", "--prompt", b"cut \xe2\x96"], 2, r"byte 0xE2 at offset 4"),
    attn("parsing", ["probe", "--model", "{tiny}", "--prompt", b"\xed\xa0\x80 surrogate"], 2, r"byte 0xED at offset 0"),
    attn("parsing", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{llama2c_tokenizer}", "--prompt", b"over\xc0\xaflong"], 2, r"byte 0xC0 at offset 4"),
    attn("parsing", ["tokenize", "--tokenizer", "{tiny}/tokenizer.json", b"ab\xc3"], 2, r"the text is not UTF-8: byte 0xC3 at offset 2"),
    attn("parsing", ["tokenize", "--tokenizer", "{tiny}/tokenizer.json", "--batch", "{batch_bad_utf8}"], 2, r"is not valid JSON: .*UTF-8"),
    attn("parsing", ["train", "--text", "{bad_utf8_text}", "--out", "{fresh}", "--steps", "2"], 2, r"the text is not UTF-8: byte 0xFF at offset \d+"),
    attn("parsing", ["train", "--text", "{nul_text}", "--out", "{fresh}", "--steps", "2"], 2, r"NUL byte at offset \d+: a binary file"),
    attn("parsing", ["train", "--text", "{empty_file}", "--out", "{fresh}", "--steps", "2"], 2, r"the text is empty"),
    attn("parsing", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{tokenizer_bad_utf8}"], 2, r"tok_bad_utf8\.bin: piece 300 is not UTF-8 \(byte 0xFF at offset 0\)"),
    # tokenizers
    attn("parsing", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{tokenizer_extra}"], 2, r"tok_extra\.bin: \d+ bytes follow the model's 512 pieces: the tokenizer has more pieces than the model's vocabulary"),
    attn("parsing", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{tokenizer_short}"], 2, r"the tokenizer ends at piece \d+ of the model's 512"),
    attn("parsing", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{tokenizer_junk}"], 2, r"tok_junk\.bin: its first 4 bytes give a longest piece of -?\d+ bytes: not a llama2\.c tokenizer\.bin"),
    attn("parsing", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{tokenizer_nan_score}"], 2, r"piece 7 has a score that is not finite"),
    attn("parsing", ["probe", "--model", "{llama2c_model}", "--tokenizer", "{tokenizer_negative_length}"], 2, r"piece 0 gives its length as -5 bytes, outside 0 to the header.s longest piece, \d+: not a llama2.c tokenizer.bin"),
    attn("parsing", ["probe", "--model", "{llama2c_model}"], 2, r"a llama2\.c checkpoint needs its tokenizer: --tokenizer FILE"),
    attn("parsing", ["probe", "--model", "{tiny}", "--tokenizer", "{tiny_big_tokenizer}"], 2, r"the tokenizer has 40 pieces, more than the model's vocab_size 32"),
    attn("parsing", ["probe", "--model", "{no_bos}"], 2, r"the tokenizer has no <s> and config\.json names no bos_token_id.*give --tokens"),
    attn("parsing", ["probe", "--model", "{no_bos}", "--tokens", "3,4,5", "--head-patterns"], 2, r"no <s>"),
    attn("parsing", ["probe", "--model", "{no_bos}", "--tokens", "3,4,5"], 0, None, r"All 4 checks passed"),
    attn("parsing", ["tokenize", "--tokenizer", "{llama2c_tokenizer}", "Once upon"], 0, None, r"^1(,\d+)+\n1\t<s>\n"),
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_bad_utf8}", "abc"], 2, r"tok_bad_utf8\.bin: piece 300 is not UTF-8"),
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_cut}", "abc"], 2, r"tok_cut\.bin: the tokenizer ends inside piece 399: the file is cut short"),
    attn("parsing", ["tokenize", "--tokenizer", "{no_bos}/tokenizer.json", "abc"], 2, r"has no beginning-of-text token <s> to put first: give --no-bos"),
    attn("parsing", ["tokenize", "--tokenizer", "{no_bos}/tokenizer.json", "--no-bos", "abc"], 0, None, r"^3,6,23,15\n"),
    attn("parsing", ["tokenize", "--tokenizer", "{config_1e400}/config.json", "abc"], 2, r"not valid JSON"),
    attn("parsing", ["tokenize", "--tokenizer", "{tiny}/config.json", "abc"], 2, r"config\.json: tokenizer\.json: model is missing; expected an object"),
    # tokenizer.json: a part that is there but of the wrong kind is named as such
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_vocab_list}", "abc"], 2,
         r'^attn: .*vocab_list\.json: tokenizer\.json: model\.vocab is a list; expected an object mapping each token to its id, \{"<s>": 1, \.\.\.\}$'),
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_no_vocab}", "abc"], 2, r"tokenizer\.json: model\.vocab is missing; expected an object mapping each token to its id"),
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_merges_object}", "abc"], 2, r'tokenizer\.json: model\.merges is an object; expected a list of merges'),
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_model_list}", "abc"], 2, r"tokenizer\.json: model is a list; expected an object"),
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_id_string}", "abc"], 2, r"""tokenizer\.json: the id of '<s>' in model\.vocab is a string \("1"\); expected a whole number"""),
    attn("parsing", ["tokenize", "--tokenizer", "{tokenizer_id_range}", "abc"], 2, r"tokenizer\.json: the id of 'extra' is 99, outside 0 to 32 \(model\.vocab holds 33 tokens\)"),
    # safetensors
    attn("parsing", ["probe", "--model", "{duplicate_tensor}"], 2, r"model\.safetensors: the header names 'model\.norm\.weight' twice"),
    attn("parsing", ["verify", "--checkpoint", "{duplicate_tensor}"], 2, r"names 'model\.norm\.weight' twice"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{theirs_duplicate}"], 2, r"the header names 'logits' twice"),
    attn("parsing", ["probe", "--model", "{end_before_start}"], 2, r"tensor 'model\.norm\.weight' has data_offsets \[\d+, \d+\]: its end comes before its start"),
    attn("parsing", ["probe", "--model", "{huge_shape}"], 2, r"tensor 'model\.norm\.weight' has a shape (of more values than memory can address|too large to address)"),
    attn("parsing", ["probe", "--model", "{truncated}"], 2, r"lies outside the file .* file truncated\?"),
    attn("parsing", ["verify", "--checkpoint", "{llama2c_huge_header}"], 2,
         r"huge_header\.bin: the header \(dim 1048576, hidden_dim 1048576, 1048576 layers, vocab 1048576, seq_len 1048576, tied\) implies 3\.23e\+19 bytes; the file has 128$"),
    # learner files
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{empty_npz}"], 2, r"empty\.npz holds no arrays: an empty \.npz"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{empty_file}"], 2, r"empty\.txt is empty \(0 bytes\)"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{npz_huge_shape}"], 2, r"huge\.npz: logits\.npy: (shape .* needs more bytes of data|the \.npy header's shape is too large)"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{npz_short}"], 2, r"shape \[1, 2, 32\] needs 512 bytes of data, the member has \d+$"),
    # token lists and numbers
    attn("parsing", ["probe", "--model", "{tiny}", "--tokens", ""], 2, r"^attn: --tokens needs at least one token id$"),
    attn("parsing", ["probe", "--model", "{tiny}", "--tokens", ","], 2, r"empty entry"),
    attn("parsing", ["probe", "--model", "{tiny}", "--tokens", "1,99"], 2, r"token id 99 is outside the vocabulary \[0, 31\]"),
    attn("parsing", ["probe", "--model", "{tiny}", "--tokens", "1,-1"], 2, r"token id -1 is negative"),
    attn("parsing", ["probe", "--model", "{tiny}", "--tokens", "1,99999999999999999999999"], 2, r"outside the vocabulary"),
    attn("parsing", ["probe", "--model", "{tiny}", "--generate", "-1"], 2, r"--generate '-1' is not a whole number in \[0, 4096\]"),
    attn("parsing", ["probe", "--model", "{tiny}", "--prompt", "x", "--tokens", "1"], 2, r"either --prompt or --tokens"),
    attn("parsing", ["probe", "--model", "{tiny}", "--dtype", "float8"], 2, r"unknown --dtype 'float8'"),
    attn("parsing", ["probe", "--model", "{tiny}", "--tokenizer", ""], 2, r"--tokenizer needs a file"),
    attn("parsing", ["probe", "--model", "{tiny}", "--prompt", "", "--head-patterns"], 2, r"--head-patterns needs a prompt of at least 2 tokens"),
    attn("parsing", ["probe", "--model", "{tiny}", "--output", ""], 2, r"an output file name is empty"),
    attn("parsing", ["verify", "--tokens", ""], 2, r"--tokens needs at least one token id"),
    attn("parsing", ["verify", "--tokens", "1"], 2, r"at least 2 ids"),
    attn("parsing", ["verify", "--batch", "0"], 2, r"--batch '0' is outside"),
    attn("parsing", ["verify", "--seed", "-3"], 2, r"--seed '-3' is not a whole number"),
    attn("parsing", ["verify", "--checkpoint", ""], 2, r"--checkpoint needs a folder or a llama2\.c file"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{theirs_ok}", "--cached", "-1"], 2, r"^attn: --cached '-1' is not a whole number in \[0, 1048576\]$"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{theirs_ok}", "--cached", "2"], 2, r"--cached 2 leaves no token of the 2 to compare"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "", "--theirs", "{theirs_ok}"], 2, r"--tokens is empty"),
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2;3", "--theirs", "{theirs_ok}"], 2, r"all must be equally long"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--steps", "0"], 2, r"--steps '0' is outside \[1, "),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--lr", "nan"], 2, r"--lr 'nan' is not a number"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--lr", "1e400"], 2, r"--lr '1e400' is not a number"),
    attn("parsing", ["train", "--text", "{text}", "--out", "{fresh}", "--repeat-fraction", "-0.5"], 2, r"--repeat-fraction '-0\.5' is outside"),
    attn("parsing", ["export-checkpoint", "{fresh}", "--layers", "0"], 2, r"--layers '0' is outside \[1, 1000\]"),
    attn("parsing", ["export-checkpoint", "{fresh}", "--seq-len", "x"], 2, r"--seq-len 'x' is not a whole number"),
    attn("parsing", ["bench", "cpu", "--prefill", "0"], 2, r"--prefill '0' is outside"),
    attn("parsing", ["bench", "cpu", "--prefill", "1,,2"], 2, r"--prefill '' is not a whole number"),
    # a name that holds a newline stays on one line
    attn("parsing", ["diff", "--checkpoint", "{tiny}", "--tokens", "1,2", "--theirs", "{theirs_newline_name}"], 2, r"'bad\\nname' is not a tensor attn diff knows"),
    attn("parsing", ["probe", "--model", "{root}/no\nsuch"], 2, r"checkpoint '.*no\\nsuch' does not exist"),
    # the command line itself
    attn("parsing", ["UNKNOWN", "--help"], 2, r"^attn: unknown command 'UNKNOWN' \(the commands: .*verify; see attn --help\)$"),
    attn("parsing", ["UNKNOWN"], 2, r"unknown command 'UNKNOWN'"),
    attn("parsing", ["probe"], 2, r"--model is required"),
    attn("parsing", ["verify", "--no-such-flag"], 2, r"--no-such-flag"),

    # ---- nothing half-written ------------------------------------------------------------
    attn("writing", ["probe", "--model", "{tiny}", "--output", "{keep_json}", "--prompt", b"\xff"], 2, r"not UTF-8"),
    attn("writing", ["probe", "--model", "{missing}", "--output", "{keep_json}"], 2, r"does not exist"),
    attn("writing", ["probe", "--model", "{tiny}", "--output", "{keep_dir}"], 2, r"^attn: cannot write '.*keep': it is a folder; give a file name"),
    attn("writing", ["probe", "--model", "{tiny}", "--output", "{missing}/trace.json"], 2, r"its folder '.*missing' does not exist"),
    attn("writing", ["probe", "--model", "{tiny}", "--output", "{keep_json}/trace.json"], 2, r"a part of its path is a file"),
    attn("writing", ["probe", "--model", "{tiny}", "--output", "{unwritable}/trace.json"], 2, r"^attn: cannot write '/proc/trace\.json': No such file or directory"),
    attn("writing", ["verify", "--tokens", "1,99", "--export-trace", "{keep_json}"], 2, r"outside the vocabulary"),
    attn("writing", ["verify", "--export-trace", "{keep_dir}"], 2, r"it is a folder"),
    attn("writing", ["export-checkpoint", "{fresh}", "--format", "llama2c"], 2, r"interleaved RoPE pairing"),
    attn("writing", ["export-checkpoint", "{keep_dir}", "--format", "llama2c"], 2, r"interleaved RoPE pairing"),
    attn("writing", ["export-checkpoint", "{keep_json}"], 2, r"is a file, not a folder"),
    attn("writing", ["export-checkpoint", "{unwritable}/model"], 2, r"^attn: cannot (create the folder|write)"),
    attn("writing", ["bench", "memory", "--reference-t", "8", "--streaming-t", "8", "--out", "{keep_dir}"], 2, r"it is a folder"),
    attn("writing", ["train", "--text", "{bad_utf8_text}", "--out", "{fresh}", "--steps", "2"], 2, r"not UTF-8"),
]

# The judges run a learner's code: tools/judge.py (Python, through attn judge) and
# tools/judge.mjs (JavaScript, through the wasm judge). One line and exit 2 when the
# run itself cannot go on; a report (exit 1) when the code is only wrong.
JUDGE_CASES = [
    Case("parsing", "judge.py", ["softmax", "{solution_unprintable}"], 2,
         r"^judge: the solution raised Odd, whose message cannot be printed \(its __str__ raised RuntimeError\): give it a message str\(\) can print$"),
    Case("parsing", "judge.py", ["softmax", "{solution_unprintable_top}"], 2, r"whose message cannot be printed"),
    Case("parsing", "judge.py", ["softmax", "{solution_nan}"], 1, None, r"(?s)FAIL.*non-finite values where numbers are expected"),
    Case("parsing", "judge.py", ["softmax", "{solution_ok_py}"], 0, None, r"4 of 4 tests passed"),
    Case("parsing", "judge.py", ["softmax", "{missing}"], 2, r"^judge: cannot read .*: no such file$"),
    Case("parsing", "judge.py", ["softmax", "{solution_ok_py}", "--timeout", "nan"], 2, r"--timeout takes a number of seconds"),
    Case("parsing", "judge.py:fake-attn", ["softmax", "{solution_ok_py}"], 2,
         r"^judge: .*fake_attn\.sh printed something that is not JSON \('hello, not json'\): is it this project's attn\?"),
    Case("parsing", "judge.py:no-attn", ["softmax", "{solution_ok_py}"], 2, r"^judge: no attn at "),
    Case("parsing", "judge.mjs", ["softmax", "{solution_unprintable_js}"], 2,
         r"^judge: the solution threw a value that cannot be printed \(turning it into text threw TypeError\)"),
    Case("parsing", "judge.mjs", ["softmax", "{solution_unprintable_js_top}"], 2, r"cannot be printed"),
    Case("parsing", "judge.mjs", ["softmax", "{solution_nan_js}"], 1, None, r"(?s)FAIL.*NaN"),
    Case("parsing", "judge.mjs", ["softmax", "{solution_ok_js}"], 0, None, r"4 of 4 tests passed"),
    Case("parsing", "judge.mjs", ["softmax", "{missing}"], 2, r"^judge: cannot read .*: no such file$"),
]


# ---- fixtures: valid files, then one defect each -------------------------------------------

def load_json(path):
    with open(path) as f:
        return json.load(f)


def save_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f)


def run_ok(*args):
    done = subprocess.run([ATTN, *args], capture_output=True, timeout=TIMEOUT)
    if done.returncode != 0:
        raise AssertionError("attn %s failed: %s" % (args, done.stderr.decode(errors="replace")))


def poke_float(folder, tensor, index, value, dtype="<f"):
    """Sets one value of a tensor in FOLDER/model.safetensors."""
    path = os.path.join(folder, "model.safetensors")
    header, data = read_safetensors(path)
    begin = header[tensor]["data_offsets"][0]
    data = bytearray(data)
    if dtype == "bf16":
        struct.pack_into("<H", data, begin + 2 * index, struct.unpack("<I", struct.pack("<f", value))[0] >> 16)
    else:
        struct.pack_into(dtype, data, begin + 4 * index, value)
    write_safetensors(path, header, bytes(data))


def raw_header(folder, edit):
    """Rewrites FOLDER/model.safetensors's header text through edit(text) -> text."""
    path = os.path.join(folder, "model.safetensors")
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    text = edit(blob[8:8 + length].decode()).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob[8 + length:])


def npy(values, shape, code="<f8"):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (code, "".join("%d, " % d for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    data = struct.pack("<%d%s" % (len(values), {"<f8": "d", "<f4": "f"}[code]), *values)
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def write_npz(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, blob in members.items():
            z.writestr(name + ".npy", blob)


def llama2c_tokenizer(pieces, scores, max_length=None):
    out = struct.pack("<i", max_length if max_length is not None else max((len(p) for p in pieces), default=1))
    for piece, score in zip(pieces, scores):
        out += struct.pack("<fi", score, len(piece)) + piece
    return out


def read_llama2c_tokenizer(path, count):
    with open(path, "rb") as f:
        blob = f.read()
    at, pieces, scores = 4, [], []
    for _ in range(count):
        score, length = struct.unpack("<fi", blob[at:at + 8])
        pieces.append(blob[at + 8:at + 8 + length])
        scores.append(score)
        at += 8 + length
    return pieces, scores


def make_fixtures(root):
    F = {"root": root}
    path = lambda *parts: os.path.join(root, *parts)  # noqa: E731

    def write(name, data):
        with open(path(name), "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path(name)

    def copy_of(name, source="tiny"):
        shutil.copytree(path(source), path(name))
        return path(name)

    F["tiny"] = path("tiny")
    run_ok("export-checkpoint", F["tiny"])
    for name, tensor, index, value in [("nan_q", "model.layers.0.self_attn.q_proj.weight", 5, float("nan")),
                                       ("inf_norm", "model.layers.1.input_layernorm.weight", 0, float("inf")),
                                       ("huge", "model.layers.0.mlp.up_proj.weight", 3, 3e38)]:
        F[name] = copy_of(name)
        poke_float(F[name], tensor, index, value)
    F["nan_embed"] = copy_of("nan_embed")
    for i in range(32 * 5, 32 * 6):  # the whole of row 5
        poke_float(F["nan_embed"], "model.embed_tokens.weight", i, float("nan"))
    F["nan_bf16"] = path("nan_bf16")
    run_ok("export-checkpoint", F["nan_bf16"], "--dtype", "bfloat16")
    poke_float(F["nan_bf16"], "model.layers.0.mlp.down_proj.weight", 17, float("nan"), "bf16")

    # llama2.c: the stories260K shape, one layer, a context of 32.
    F["llama2c"] = path("llama2c")
    run_ok("export-checkpoint", F["llama2c"], "--config", "stories260k", "--layers", "1", "--format", "llama2c", "--seq-len", "32")
    F["llama2c_model"], F["llama2c_tokenizer"] = path("llama2c", "model.bin"), path("llama2c", "tokenizer.bin")
    shutil.copy(F["llama2c_model"], path("nan_model.bin"))
    F["nan_llama2c"] = path("nan_model.bin")
    with open(F["nan_llama2c"], "r+b") as f:  # version 0: a 28-byte header, then the embedding [512, 64], then
        dim, vocab = 64, 512                  # per-layer norms [1, 64], wq, wk, wv, wo, ffn norms, w1, w2, w3, final norm
        hidden, kv = 172, 32
        final_norm = 28 + 4 * (vocab * dim + dim + dim * dim + 2 * dim * kv + dim * dim + dim + 3 * dim * hidden)
        f.seek(final_norm + 4 * 3)
        f.write(struct.pack("<f", float("nan")))
    F["llama2c_huge_header"] = write("huge_header.bin", struct.pack("<7i", 1 << 20, 1 << 20, 1 << 20, 1024, 1024, 1 << 20, 1 << 20) + b"\0" * 100)
    pieces, scores = read_llama2c_tokenizer(F["llama2c_tokenizer"], 512)
    F["tokenizer_extra"] = write("tok_extra.bin", llama2c_tokenizer(pieces + [b"zz", b"qq"], scores + [0.0, 0.0]))
    F["tokenizer_short"] = write("tok_short.bin", llama2c_tokenizer(pieces[:400], scores[:400]))
    F["tokenizer_cut"] = write("tok_cut.bin", llama2c_tokenizer(pieces[:400], scores[:400])[:-3])
    F["tokenizer_junk"] = write("tok_junk.bin", struct.pack("<i", -345840570) + os.urandom(4000))
    bad = list(pieces)
    bad[300] = b"\xff\xfe"
    F["tokenizer_bad_utf8"] = write("tok_bad_utf8.bin", llama2c_tokenizer(bad, scores))
    nan_scores = list(scores)
    nan_scores[7] = float("nan")
    F["tokenizer_nan_score"] = write("tok_nan_score.bin", llama2c_tokenizer(pieces, nan_scores))
    F["tokenizer_negative_length"] = write("tok_negative.bin", struct.pack("<i", 27) + struct.pack("<fi", 0.0, -5) + b"x" * 64)

    # Hugging Face folders with one defect each.
    F["short_context"] = copy_of("short_context")
    config = load_json(path("tiny", "config.json"))
    save_json(path("short_context", "config.json"), dict(config, max_position_embeddings=8))
    F["config_string"] = copy_of("config_string")
    save_json(path("config_string", "config.json"), dict(config, hidden_size="32"))
    F["config_1e400"] = copy_of("config_1e400")
    with open(path("config_1e400", "config.json"), "w") as f:
        f.write(json.dumps(config).replace('"rms_norm_eps": 1e-06', '"rms_norm_eps": 1e400'))
    F["config_bad_utf8"] = copy_of("config_bad_utf8")
    with open(path("config_bad_utf8", "config.json"), "wb") as f:
        f.write(json.dumps(dict(config, _name_or_path="NAME")).encode().replace(b"NAME", b"na\xffme"))
    F["config_list"] = copy_of("config_list")
    save_json(path("config_list", "config.json"), [config])
    F["no_bos"] = copy_of("no_bos")
    tokenizer = load_json(path("tiny", "tokenizer.json"))
    vocab = tokenizer["model"]["vocab"]
    vocab["<bos>"] = vocab.pop("<s>")  # the same ids, no piece called <s>
    save_json(path("no_bos", "tokenizer.json"), tokenizer)
    save_json(path("no_bos", "config.json"), {k: v for k, v in config.items() if k != "bos_token_id"})
    big = load_json(path("tiny", "tokenizer.json"))
    for i in range(8):
        big["model"]["vocab"]["extra%d" % i] = 32 + i
    F["tiny_big_tokenizer"] = write("big_tokenizer.json", json.dumps(big))
    def tokenizer_with(name, edit):
        tokenizer = load_json(path("tiny", "tokenizer.json"))
        edit(tokenizer["model"])
        return write(name, json.dumps(tokenizer))
    F["tokenizer_vocab_list"] = tokenizer_with("vocab_list.json", lambda m: m.update(vocab=sorted(m["vocab"], key=m["vocab"].get)))
    F["tokenizer_no_vocab"] = tokenizer_with("no_vocab.json", lambda m: m.pop("vocab"))
    F["tokenizer_merges_object"] = tokenizer_with("merges_object.json", lambda m: m.update(merges={"a": "b"}))
    F["tokenizer_id_string"] = tokenizer_with("id_string.json", lambda m: m["vocab"].update({"<s>": str(m["vocab"]["<s>"])}))
    F["tokenizer_id_range"] = tokenizer_with("id_range.json", lambda m: m["vocab"].update(extra=99))
    F["tokenizer_model_list"] = write("model_list.json", json.dumps({"model": []}))
    F["outputs_numbers"] = write("outputs_numbers.json", "[1,2,3,4]\n")

    F["duplicate_tensor"] = copy_of("duplicate_tensor")
    def duplicate(text):  # the final norm's entry written twice, the second pointing at other bytes of the same size
        header = json.loads(text)
        entries = ['"%s": %s' % (name, json.dumps(entry)) for name, entry in header.items()]
        norm = header["model.norm.weight"]
        other = dict(norm, data_offsets=[0, norm["data_offsets"][1] - norm["data_offsets"][0]])
        return "{" + ", ".join(entries + ['"model.norm.weight": ' + json.dumps(other)]) + "}"
    raw_header(F["duplicate_tensor"], duplicate)
    F["end_before_start"] = copy_of("end_before_start")
    header, data = read_safetensors(path("tiny", "model.safetensors"))
    begin, end = header["model.norm.weight"]["data_offsets"]
    write_safetensors(path("end_before_start", "model.safetensors"),
                      dict(header, **{"model.norm.weight": dict(header["model.norm.weight"], data_offsets=[end, begin])}), data)
    F["huge_shape"] = copy_of("huge_shape")
    write_safetensors(path("huge_shape", "model.safetensors"),
                      dict(header, **{"model.norm.weight": dict(header["model.norm.weight"], shape=[2 ** 40, 2 ** 40, 2 ** 30])}), data)
    F["truncated"] = copy_of("truncated")
    write_safetensors(path("truncated", "model.safetensors"), header, data[:len(data) // 2])

    # Texts.
    text = "".join("%s said the %d%s cat to the %s dog.\n" % (w, i, w[::-1], w.upper())
                   for i, w in enumerate(["first", "second", "third", "fourth", "fifth"] * 200))
    F["text"] = write("text.txt", text)
    F["short_text"] = write("short.txt", "abcdefghij" * 40)
    F["one_character_text"] = write("one.txt", "a" * 5000)
    F["bad_utf8_text"] = write("bad.txt", text.encode()[:3000] + b"\xff" + text.encode()[3000:])
    F["nul_text"] = write("nul.txt", text.encode()[:100] + b"\0" + text.encode()[100:])
    F["empty_file"] = write("empty.txt", b"")
    F["config_file_bad"] = write("config_bad.json", "{hidden_size: 64}")
    F["batch_bad_utf8"] = write("batch.json", b'["ok", "\xff"]')
    F["outputs_1e400"] = write("outputs_1e400.json", '[{"value": 1e400}]')
    F["outputs_deep"] = write("outputs_deep.json", '[{"value": ' + "[" * 200000 + "]" * 200000 + '}, 1, 2, 3]')
    F["config_deep"] = write("config_deep.json", '{"hidden_act": ' + "[" * 5000 + "]" * 5000 + "}")

    # A learner's tensors for attn diff (np.savez's layout, written here).
    F["theirs_ok"] = path("theirs_ok.npz")
    write_npz(F["theirs_ok"], {"embed": npy([0.0] * 64, [1, 2, 32])})
    # The core's own logits for tokens 1, 2, 3 (float32, as verify's trace holds them), with one value replaced.
    run_ok("verify", "--checkpoint", F["tiny"], "--tokens", "1,2,3", "--batch", "1", "--export-trace", path("logits.json"))
    logits = [x for row in load_json(path("logits.json"))["logits"][0] for x in row]
    for name, value in [("theirs_nan", float("nan")), ("theirs_inf", float("inf"))]:
        F[name] = path(name + ".npz")
        write_npz(F[name], {"logits": npy(logits[:40] + [value] + logits[41:], [1, 3, 32], "<f4")})
    F["theirs_nan_all"] = path("theirs_nan_all.npz")
    write_npz(F["theirs_nan_all"], {"logits": npy([float("nan")] * 96, [1, 3, 32])})
    F["theirs_ten"] = path("theirs_ten.npz")
    write_npz(F["theirs_ten"], {"logits": npy([0.0] * 320, [1, 10, 32])})
    F["theirs_newline_name"] = path("newline.npz")
    write_npz(F["theirs_newline_name"], {"bad\nname": npy([0.0], [1])})
    F["empty_npz"] = path("empty.npz")
    with zipfile.ZipFile(F["empty_npz"], "w"):
        pass
    F["npz_huge_shape"] = path("huge.npz")
    write_npz(F["npz_huge_shape"], {"logits": npy([0.0] * 2, [1]).replace(b"(1, )", b"(99999999999999999999999999, )")})
    F["npz_short"] = path("short.npz")
    write_npz(F["npz_short"], {"logits": npy([0.0] * 2, [2]).replace(b"(2, )", b"(1, 2, 32, )")})
    F["theirs_duplicate"] = path("theirs_duplicate.safetensors")
    blob = '{"logits": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}, "logits": {"dtype": "F64", "shape": [1], "data_offsets": [8, 16]}}'
    blob = blob.encode() + b" " * (-len(blob) % 8)
    with open(F["theirs_duplicate"], "wb") as f:
        f.write(struct.pack("<Q", len(blob)) + blob + b"\0" * 16)

    # Solutions for the judges.
    F["solution_unprintable"] = write("unprintable.py", "class Odd(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n\n"
                                                         "def softmax(x):\n    raise Odd()\n")
    F["solution_unprintable_top"] = write("unprintable_top.py", "class Odd(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n\nraise Odd()\n")
    F["solution_nan"] = write("nan_solution.py", "import numpy as np\ndef softmax(x):\n    return np.full(x.shape, np.nan)\n")
    F["solution_ok_py"] = write("ok_solution.py", "import numpy as np\ndef softmax(x):\n    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
                                                  "    return e / e.sum(axis=-1, keepdims=True)\n")
    F["solution_unprintable_js"] = write("unprintable.js", "function softmax(x) { throw Object.create(null); }\n")
    F["solution_unprintable_js_top"] = write("unprintable_top.js", "throw { toString() { throw new TypeError('no'); }, get message() { throw new TypeError('no'); } };\n")
    F["solution_nan_js"] = write("nan_solution.js", "function softmax(x) { return x.map((row) => row.map(() => NaN)); }\n")
    F["solution_ok_js"] = write("ok_solution.js", "function softmax(x) {\n  return x.map((row) => {\n    const m = Math.max(...row);\n"
                                                  "    const e = row.map((v) => Math.exp(v - m));\n    const s = e.reduce((a, b) => a + b, 0);\n"
                                                  "    return e.map((v) => v / s);\n  });\n}\n")
    F["fake_attn"] = write("fake_attn.sh", "#!/bin/sh\necho 'hello, not json'\n")
    os.chmod(F["fake_attn"], 0o755)

    # Places to write, and things that are not files.
    F["fifo"] = path("fifo")
    os.mkfifo(F["fifo"])
    F["fifo_folder"] = path("fifo_folder")
    os.mkdir(F["fifo_folder"])
    os.mkfifo(path("fifo_folder", "config.json"))
    F["keep_json"] = write("keep.json", "keep")
    F["keep_dir"] = path("keep")
    os.mkdir(F["keep_dir"])
    write(os.path.join("keep", "mine.txt"), "mine")
    F["unwritable"] = "/proc"  # no file or folder can be made there, not even by root
    F["missing"] = path("missing")
    F["fresh"] = path("fresh")
    F["trace_out"] = path("trace_out.json")  # a trace a run that fails its checks still writes
    return F


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(ATTN, os.X_OK):
            raise AssertionError("attn binary not found at %s: set ATTN to build/<preset>/native/attn" % ATTN)
        cls.tmp = tempfile.mkdtemp(prefix="attn-bad-input-")
        cls.F = make_fixtures(cls.tmp)
        cls.counts = collections.Counter()
        cls.seconds = []

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        print("\nbad-input battery: %d cases run (%s)" % (
            sum(cls.counts.values()), ", ".join("%s %d" % kv for kv in sorted(cls.counts.items()))), file=sys.stderr)
        for seconds, shown in sorted(cls.seconds, reverse=True)[:5]:
            print("  slowest: %.1f s  %s" % (seconds, shown[:120]), file=sys.stderr)

    def command(self, case):
        """The argv and environment of a case."""
        fill = lambda a: a if isinstance(a, bytes) else a.format(**self.F)  # noqa: E731
        args = [fill(a) for a in case.args]
        env = dict(os.environ)
        if case.program == "attn":
            return [ATTN, *args], env
        if case.program.startswith("judge.py"):
            env["ATTN"] = {"judge.py": ATTN, "judge.py:fake-attn": self.F["fake_attn"],
                           "judge.py:no-attn": os.path.join(self.tmp, "no-attn")}[case.program]
            return [PYTHON, os.path.join(REPO, "tools", "judge.py"), *args], env
        env["ANATOMY_WASM_DIR"] = WASM_DIR
        return [NODE, os.path.join(REPO, "tools", "judge.mjs"), *args], env

    def check(self, case):
        argv, env = self.command(case)
        stdin = case.stdin
        if stdin == "ZEROS":  # more than the 64 MB attn judge reads
            stdin = b"\0" * (70 << 20)
        elif isinstance(stdin, str):
            stdin = stdin.encode()
        shown = " ".join(repr(a) for a in argv[1:])
        started = time.monotonic()
        try:
            done = subprocess.run(argv, input=stdin if stdin is not None else b"", capture_output=True, env=env, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail("%s: still running after %d s (a hang, or an unbounded read)" % (shown, TIMEOUT))
        self.seconds.append((time.monotonic() - started, shown))
        out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
        report = "%s\nexit %d\nstdout:\n%s\nstderr:\n%s" % (shown, done.returncode, out[-3000:], err[-3000:])
        self.assertGreaterEqual(done.returncode, 0, "killed by signal %d\n%s" % (-done.returncode, report))
        for marker in CRASH_MARKERS:
            self.assertNotIn(marker, out + err, report)
        self.assertEqual(done.returncode, case.status, report)
        lines = err.splitlines()
        if case.status == 2:
            self.assertEqual(len(lines), 1, "expected exactly one line on stderr\n" + report)
            self.assertTrue(lines[0].startswith("attn: " if case.program == "attn" else "judge: "), report)
        if case.line is None:
            self.assertEqual(err, "", "expected nothing on stderr\n" + report)
        else:
            self.assertEqual(len(lines), 1, "expected exactly one line on stderr\n" + report)
            self.assertRegex(lines[0], case.line, report)
        if case.out is not None:
            self.assertRegex(out, case.out, report)
        if case.status != 0 and case.program == "attn":
            self.assertNotRegex(out, r"All \d+ checks passed", report)
        # Nothing half-written, and nothing a failed command was to write over changed.
        partial = [os.path.join(d, n) for d, dirs, files in os.walk(self.tmp) for n in dirs + files if ".partial-" in n]
        self.assertEqual(partial, [], "a partial output was left\n" + report)
        with open(self.F["keep_json"]) as f:
            self.assertEqual(f.read(), "keep", "keep.json was written over\n" + report)
        self.assertEqual(sorted(os.listdir(self.F["keep_dir"])), ["mine.txt"], "keep/ was written into\n" + report)
        if case.status == 2:
            self.assertFalse(os.path.exists(self.F["fresh"]), "a refused command left its output\n" + report)
        self.assertFalse(os.path.exists(self.F["missing"]), report)

    def test_every_case(self):
        failures = []
        for number, case in enumerate(CASES + JUDGE_CASES):
            if case.program == "judge.mjs" and not (NODE and os.path.exists(os.path.join(WASM_DIR, "attention_judge.wasm"))):
                print("SKIPPED: %s (no node or no wasm build at %s)" % (case.args, WASM_DIR), file=sys.stderr)
                continue
            with self.subTest(number=number, cls=case.cls, program=case.program, args=case.args):
                self.counts[(case.args[0] if case.program == "attn" else case.program.split(":")[0])] += 1
                self.check(case)
                # A fresh output of a case that ran to its end is removed for the next one.
                shutil.rmtree(self.F["fresh"], ignore_errors=True)
                if os.path.exists(self.F["trace_out"]):
                    os.remove(self.F["trace_out"])


class InterruptedWriters(unittest.TestCase):
    """Ctrl+C while export-checkpoint is writing model.safetensors: exit 130, and no
    partial file, into a new folder or over an existing checkpoint (whose files stay
    whole: the old ones, or the new ones where they were already renamed into place)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="attn-interrupt-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def interrupt_while_writing(self, target, partial_glob):
        # 1 layer of stories110M's shapes (its 32,000-token embedding): 127 MB of float32, written for long enough
        # (0.8 s natively, longer under the sanitizers) that the signal lands while model.safetensors is being written.
        run = subprocess.Popen([ATTN, "export-checkpoint", target, "--config", "stories110m", "--layers", "1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + TIMEOUT
        while not partial_glob(run.pid):
            self.assertIsNone(run.poll(), "export-checkpoint ended before it began writing")
            self.assertLess(time.monotonic(), deadline, "model.safetensors was never being written")
            time.sleep(0.01)
        run.send_signal(signal.SIGINT)
        err = run.stderr.read()
        run.stderr.close()
        self.assertEqual(run.wait(timeout=TIMEOUT), 130, err)
        self.assertRegex(err, r"^attn: interrupted \(SIGINT\); no file was left half-written\n$")
        left = [os.path.join(d, n) for d, dirs, files in os.walk(self.tmp) for n in dirs + files if ".partial-" in n]
        self.assertEqual(left, [])

    def test_into_a_new_folder(self):
        target = os.path.join(self.tmp, "new")
        self.interrupt_while_writing(target, lambda pid: os.path.exists(
            os.path.join("%s.partial-%d" % (target, pid), "model.safetensors.partial-%d" % pid)))
        self.assertFalse(os.path.exists(target))

    def test_over_an_existing_checkpoint(self):
        target = os.path.join(self.tmp, "existing")
        run_ok("export-checkpoint", target)
        with open(os.path.join(target, "model.safetensors"), "rb") as f:
            before = f.read()
        self.interrupt_while_writing(target, lambda pid: os.path.exists(os.path.join(target, "model.safetensors.partial-%d" % pid)))
        with open(os.path.join(target, "model.safetensors"), "rb") as f:
            self.assertEqual(f.read(), before, "the old weights must be whole")
        self.assertEqual(sorted(os.listdir(target)), ["config.json", "model.safetensors", "tokenizer.json"])


if __name__ == "__main__":
    unittest.main()
