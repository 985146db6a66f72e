"""attn probe against an independent reference: Hugging Face transformers (or NumPy).

Exports a TinyLlama-shaped checkpoint (`attn export-checkpoint DIR --config
tinyllama-1.1b --layers 2`), runs `attn probe --model DIR --tokens IDS --generate N`
on the CPU and on the GPU (`--output` traces), runs the same ids through the
reference, and compares with both traces:
  - the logits of the last prompt position (the probe records only that row),
  - every layer's attention probabilities [Hq, T, T], and
  - the greedy continuation: argmax after the prompt, then after each chosen id,
    stopping after an id in config.json's eos_token_id (the probe's rule), at most N.

References (--reference):
  transformers  LlamaForCausalLM.from_pretrained(DIR, attn_implementation="eager",
                torch_dtype=torch.float32) (dtype= from 4.56), on the CPU: fp32 there has no TF32 or bf16
                shortcut (float32 matmul precision is set to "highest" anyway, and TF32
                off for good measure), the 2-layer model runs in seconds, and the
                reference does not share the GPU it is checking. Every step recomputes
                the whole sequence (use_cache=False): the continuation is not decoded
                through any cache, so it checks the probe's KV cache path too.
  numpy         tests/crosscheck/numpy_llama.py, an independent float64 Llama (its own
                safetensors reader): the same comparison where transformers is missing.
                tests/gpu-check/test_hf_reference.py runs it on the tiny model in ctest.

Tolerance: logits <= 1e-3, probabilities <= 1e-4, continuation ids equal. Both sides
compute in float32 (numpy: float64) from the same stored weights and differ only in
summation order: dot products over D = 2048 and over the FFN's 5632, RoPE angles in
float32 (transformers) or float64 (attn). A logit moves by ~1e-5 and a probability by
less (tests/crosscheck measures 6e-6..9e-6 and 4e-7 against float64); the bounds are
those tests/cuda/test_gpu_cli.py holds the GPU probe to against the CPU one (the probe's
own cached-vs-full bound, and ten times the observed gap), while a wrong RoPE pairing,
mask or KV-head mapping moves logits by 0.1 or more. The continuation must match id for
id: random weights rarely put two logits within 1e-5 of each other, and when the ids
part the line says where and how close the reference's top two logits were there.

Prints one line, e.g.
  transformers 4.46.3 eager fp32 (CPU) vs attn probe: logits cpu 3e-06 cuda 4e-06 (<= 1e-03),
  probabilities cpu 2e-07 cuda 3e-07 (<= 1e-04), continuation cpu 8/8 cuda 8/8 equal: PASS
Exit 0 (PASS), 1 (FAIL), 77 (SKIPPED: the reference's packages are missing, or only the
GPU side was asked for and there is no CUDA device). With --devices auto (the default)
the GPU side runs when `attn devices` lists cuda:0 and is marked SKIPPED otherwise; a
device named in --devices must run.

Run: python3 tests/cuda/hf_reference.py --attn build/cuda/native/attn
     python3 tests/cuda/hf_reference.py --attn build/native/native/attn --reference numpy --config tiny
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOGIT_TOLERANCE = 1e-3
PROBABILITY_TOLERANCE = 1e-4
SKIP = 77


def fixed_ids(vocab_size, count):
    """BOS, then count - 1 ids spread over the vocabulary by a fixed formula, never 0-2 (unk, BOS, EOS)."""
    return [1] + [3 + (7919 * i + 104729 * i * i) % (vocab_size - 3) for i in range(1, count)]


def eos_ids(checkpoint):
    """config.json's eos_token_id (an int or a list), as attn probe reads it."""
    with open(os.path.join(checkpoint, "config.json")) as f:
        eos = json.load(f).get("eos_token_id")
    if eos is None:
        return None  # the probe then takes the tokenizer's </s>; the trace says which
    return eos if isinstance(eos, list) else [eos]


# --- references: (logits [T, V], [L x [Hq, T, T]]) for one sequence ----------------

class TransformersReference:
    def __init__(self, checkpoint):
        import warnings

        import torch
        import transformers
        self.torch = torch
        torch.set_float32_matmul_precision("highest")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        # torch_dtype was renamed dtype in transformers 4.56 (the old name still works there, with a warning).
        version = tuple(int(part) for part in transformers.__version__.split(".")[:2] if part.isdigit())
        dtype_argument = {"dtype" if version >= (4, 56) else "torch_dtype": torch.float32}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = transformers.LlamaForCausalLM.from_pretrained(
                checkpoint, attn_implementation="eager", **dtype_argument)
        self.model.eval()
        dtype = next(self.model.parameters()).dtype
        if dtype != torch.float32:
            raise RuntimeError("transformers loaded the weights as %s, not float32" % dtype)
        self.name = "transformers %s eager fp32 (CPU)" % transformers.__version__

    def forward(self, ids):
        torch = self.torch
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([ids]), output_attentions=True, use_cache=False)
        logits = out.logits[0].double().numpy()                     # [T, V]
        probs = [a[0].double().numpy() for a in out.attentions]     # L x [Hq, T, T]
        return logits, probs

    def last_logits(self, ids):
        torch = self.torch
        with torch.no_grad():
            return self.model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].double().numpy()


class NumpyReference:
    def __init__(self, checkpoint):
        sys.path.insert(0, os.path.join(HERE, "..", "crosscheck"))
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree
        import numpy_llama
        self.llama = numpy_llama
        self.config, self.weights = numpy_llama.load_checkpoint(checkpoint)
        self.name = "numpy float64 (tests/crosscheck/numpy_llama.py)"

    def forward(self, ids):
        logits, probs = self.llama.forward(self.config, self.weights, [ids])  # [1, T, V], L x [1, Hq, T, T]
        return logits[0], [p[0] for p in probs]

    def last_logits(self, ids):
        return self.forward(ids)[0][-1]


def greedy(reference, ids, generate, stop_ids):
    """The probe's continuation rule: argmax after the prompt, append, stop after a stop
    id or after `generate` ids. Returns (ids, the top-two logit gap at each step)."""
    sequence, chosen, gaps = list(ids), [], []
    for _ in range(generate):
        last = reference.last_logits(sequence)
        order = last.argsort()[::-1]  # descending; ties: argmax below picks the lowest id, as the probe does
        next_id = int(last.argmax())
        gaps.append(float(last[order[0]] - last[order[1]]))
        chosen.append(next_id)
        sequence.append(next_id)
        if stop_ids and next_id in stop_ids:
            break
    return chosen, gaps


# --- attn ------------------------------------------------------------------------

def attn(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError("attn %s exited %d: %s" % (" ".join(args), result.returncode,
                                                     (result.stderr or result.stdout).strip()[-2000:]))
    return result.stdout


def has_cuda(binary):
    result = subprocess.run([binary, "devices"], capture_output=True, text=True, timeout=60)
    return "cuda:0" in result.stdout


def compare(np, trace, ids, ref_logits, ref_probs, ref_continuation, ref_gaps):
    """One trace against the reference: (logit error, probability error, equal ids, of how many, problems)."""
    problems = []
    if trace["tokens"] != [ids]:
        problems.append("the trace's tokens are not the ids given")
    T = len(ids)
    positions = trace.get("logits_positions", list(range(T)))
    logits = np.asarray(trace["logits"], dtype=np.float64)[0]  # [R, V]
    logit_error = float(np.max(np.abs(logits - ref_logits[positions])))
    if len(trace["layers"]) != len(ref_probs):
        problems.append("%d layers in the trace, %d in the reference" % (len(trace["layers"]), len(ref_probs)))
    prob_error = 0.0
    for layer, ref in zip(trace["layers"], ref_probs):
        p = np.asarray(layer["probabilities"], dtype=np.float64)[0]  # [Hq, T, T]
        if p.shape != ref.shape:
            problems.append("probabilities %s vs %s" % (p.shape, ref.shape))
            continue
        prob_error = max(prob_error, float(np.max(np.abs(p - ref))))
    got = trace["probe"]["continuation"]["ids"]
    equal = 0
    for a, b in zip(got, ref_continuation):
        if a != b:
            break
        equal += 1
    if got != ref_continuation:
        where = equal
        gap = " (the reference's top two logits %.1e apart there)" % ref_gaps[where] if where < len(ref_gaps) else ""
        problems.append("continuation parts at step %d: attn %s, reference %s%s" % (where + 1, got, ref_continuation, gap))
    if logit_error > LOGIT_TOLERANCE:
        problems.append("logits differ by %.1e" % logit_error)
    if prob_error > PROBABILITY_TOLERANCE:
        problems.append("probabilities differ by %.1e" % prob_error)
    return logit_error, prob_error, equal, max(len(got), len(ref_continuation)), problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attn", default=os.environ.get("ATTN", "build/cuda/native/attn"), help="the attn binary")
    parser.add_argument("--reference", choices=["transformers", "numpy"], default="transformers")
    parser.add_argument("--devices", default="auto", help="auto (cpu, and cuda when there is one), or cpu,cuda / cpu / cuda")
    parser.add_argument("--config", default="tinyllama-1.1b", help="export-checkpoint --config (tiny or tinyllama-1.1b)")
    parser.add_argument("--layers", default="2", help="export-checkpoint --layers ('' for the preset's)")
    parser.add_argument("--checkpoint", help="the checkpoint folder: used as it is when it has config.json, "
                                             "else exported there (default: inside --work)")
    parser.add_argument("--work", help="folder for the traces (default: a temporary one)")
    parser.add_argument("--tokens", type=int, default=16, help="prompt length (fixed ids, BOS first)")
    parser.add_argument("--generate", type=int, default=8, help="continuation length")
    parser.add_argument("--trace", action="append", default=[], metavar="DEVICE=FILE",
                        help="compare this trace instead of running the probe on DEVICE (for the self-test)")
    args = parser.parse_args(argv)

    try:
        import numpy as np
    except ImportError:
        print("SKIPPED: numpy is not importable from %s" % sys.executable)
        return SKIP
    if args.reference == "transformers":
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as error:
            print("SKIPPED: transformers reference: %s (python %s)" % (error, sys.executable))
            return SKIP

    given = dict(item.split("=", 1) for item in args.trace)
    if args.devices == "auto":
        devices, required = ["cpu", "cuda"], {"cpu"}
    else:
        devices = [d.strip() for d in args.devices.split(",") if d.strip()]
        required = set(devices)
    cuda_there = "cuda" in given or ("cuda" in devices and has_cuda(args.attn))

    with tempfile.TemporaryDirectory(prefix="attn-hf-reference-") as temporary:
        work = args.work or temporary
        os.makedirs(work, exist_ok=True)
        checkpoint = args.checkpoint or os.path.join(work, "checkpoint")
        if not os.path.exists(os.path.join(checkpoint, "config.json")):
            export = ["export-checkpoint", checkpoint, "--config", args.config]
            if args.layers:
                export += ["--layers", args.layers]
            attn(args.attn, *export)
        with open(os.path.join(checkpoint, "config.json")) as f:
            vocab_size = json.load(f)["vocab_size"]
        ids = fixed_ids(vocab_size, args.tokens)

        traces, skipped = {}, {}
        for device in devices:
            if device == "cuda" and not cuda_there:
                skipped[device] = "no CUDA device"
                continue
            path = given.get(device) or os.path.join(work, "hf-probe-%s.json" % device)
            if device not in given:
                attn(args.attn, "probe", "--model", checkpoint, "--tokens", ",".join(map(str, ids)),
                     "--generate", str(args.generate), "--device", device, "--output", path)
            with open(path) as f:
                traces[device] = json.load(f)
        if not traces:
            print("SKIPPED: %s" % "; ".join("%s: %s" % kv for kv in skipped.items()))
            return SKIP

        reference = TransformersReference(checkpoint) if args.reference == "transformers" else NumpyReference(checkpoint)
        ref_logits, ref_probs = reference.forward(ids)
        stop = eos_ids(checkpoint) or next(iter(traces.values()))["probe"]["model"]["eos_token_ids"]
        ref_continuation, gaps = greedy(reference, ids, args.generate, stop)

    results, problems = {}, []
    for device, trace in traces.items():
        results[device] = compare(np, trace, ids, ref_logits, ref_probs, ref_continuation, gaps)
        problems += ["%s: %s" % (device, p) for p in results[device][4]]
    for device in sorted(required & set(skipped)):
        problems.append("%s: asked for, but %s" % (device, skipped[device]))

    def column(format_one):
        return " ".join("%s %s" % (d, format_one(results[d])) for d in devices if d in results)

    verdict = "FAIL" if problems else "PASS"
    skips = "".join("; %s SKIPPED (%s)" % (d, skipped[d]) for d in devices if d in skipped)
    print("%s vs attn probe (%s, %s layers, %d ids + %d): logits %s (<= %.0e), probabilities %s (<= %.0e), "
          "continuation %s equal%s: %s" % (
              reference.name, args.config, args.layers or "all", len(ids), args.generate,
              column(lambda r: "%.1e" % r[0]), LOGIT_TOLERANCE, column(lambda r: "%.1e" % r[1]), PROBABILITY_TOLERANCE,
              column(lambda r: "%d/%d" % (r[2], r[3])), skips, verdict))
    for problem in problems:
        print("  " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except RuntimeError as error:
        print("hf_reference: FAIL: %s" % error)
        sys.exit(1)
