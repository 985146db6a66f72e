"""The `attn` command line: what a user types, what they see, and how it fails.

Success paths check the help, the version, the verification table, the trace
JSON and the checkpoint round trip. Every error path must exit with status 2
(never a signal, never another code) and print exactly one line on stderr that
starts with "attn:" and names the offending value, flag or file, with no
traceback or C++ abort text anywhere. Malformed checkpoints are made here from
a valid export, one defect each.

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_cli.py
Standard library only.
"""

import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTN = os.environ.get("ATTN", os.path.join(REPO, "build", "native", "native", "attn"))
# The pass over the sanitizer build (tests/cli/CMakeLists.txt sets it): tests that are bulk
# arithmetic at a model's scale leave their assertions to the native pass.
SANITIZED = os.environ.get("ANATOMY_SANITIZED") == "1"

CHECK_IDS = ["a", "b", "c", "d", "e1", "e2", "e3", "f1", "f2", "g", "h1", "h2"]
TINY = {"vocab_size": 32, "hidden_size": 32, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "head_dim": 8,
        "ffn_size": 96}
# Text that means a crash or an unhandled exception rather than a message for the user.
CRASH_MARKERS = ["Traceback", "terminate called", "what():", "Aborted", "Segmentation fault", "core dumped",
                 "AddressSanitizer", "runtime error:"]


def run_attn(*args):
    return subprocess.run([ATTN, *args], capture_output=True, text=True, timeout=120)


def shape_of(nested):
    """The shape of a nested JSON list, checking that it is rectangular."""
    if not isinstance(nested, list):
        return ()
    inner = {shape_of(item) for item in nested}
    if len(inner) > 1:
        raise AssertionError("ragged nested list: %s" % sorted(inner))
    return (len(nested),) + (inner.pop() if inner else ())


# --- safetensors surgery: read a valid file, change one thing, write it back -----

def read_safetensors(path):
    """(header dict, data bytes) of a safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8:8 + length]), blob[8 + length:]


def write_safetensors(path, header, data):
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned, as writers do
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def add_tensor(path, name, values):
    """Appends a float32 vector `name` to the safetensors file at `path`."""
    header, data = read_safetensors(path)
    header[name] = {"dtype": "F32", "shape": [len(values)], "data_offsets": [len(data), len(data) + 4 * len(values)]}
    write_safetensors(path, header, data + struct.pack("<%df" % len(values), *values))


def add_rope_buffers(path, layers=TINY["n_layers"], head_dim=TINY["head_dim"], theta=10000.0):
    """Adds model.layers.N.self_attn.rotary_emb.inv_freq, as older transformers versions saved them."""
    for layer in range(layers):
        add_tensor(path, "model.layers.%d.self_attn.rotary_emb.inv_freq" % layer,
                   [theta ** (-2 * i / head_dim) for i in range(head_dim // 2)])


class AttnTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(ATTN, os.X_OK):
            raise AssertionError("attn binary not found at %s: set ATTN to build/<preset>/native/attn" % ATTN)

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="attn-cli-")
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def ok(self, *args):
        """Runs attn and asserts exit 0 with nothing on stderr; returns stdout."""
        result = run_attn(*args)
        self.assertEqual(result.returncode, 0, "attn %s\nstdout:\n%s\nstderr:\n%s" % (args, result.stdout, result.stderr))
        self.assertEqual(result.stderr, "", "attn %s wrote to stderr" % (args,))
        return result.stdout

    def fails(self, args, *mentions):
        """Asserts the error contract for `attn args`; returns the stderr line.
        `mentions`: substrings the line must contain (the offending value, flag or file)."""
        result = run_attn(*args)
        shown = "attn %s\nexit %d\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(repr(a) for a in args), result.returncode, result.stdout, result.stderr)
        self.assertGreaterEqual(result.returncode, 0, "killed by signal %d\n%s" % (-result.returncode, shown))
        self.assertEqual(result.returncode, 2, shown)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, "expected exactly one line on stderr\n" + shown)
        self.assertTrue(result.stderr.endswith("\n"), "the stderr line must end with a newline\n" + shown)
        line = lines[0]
        self.assertTrue(line.startswith("attn: "), shown)
        for marker in CRASH_MARKERS:
            self.assertNotIn(marker, result.stdout, shown)
            self.assertNotIn(marker, result.stderr, shown)
        for mention in mentions:
            self.assertIn(mention, line, "the message should mention %r\n%s" % (mention, shown))
        return line

    def export(self, name="checkpoint", *args):
        directory = self.path(name)
        self.ok("export-checkpoint", directory, *args)
        return directory


# --- success paths --------------------------------------------------------------

class Help(AttnTestCase):
    def test_top_level_help(self):
        out = self.ok("--help")
        for word in ["verify", "export-checkpoint", "devices", "--version"]:
            self.assertIn(word, out)

    def test_verify_help(self):
        out = self.ok("verify", "--help")
        for option in ["--tokens", "--batch", "--seed", "--config", "--checkpoint", "--export-trace"]:
            self.assertIn(option, out)

    def test_export_checkpoint_help(self):
        out = self.ok("export-checkpoint", "--help")
        for option in ["dir", "--config", "--seed", "--dtype", "--layers", "float32", "float16", "bfloat16"]:
            self.assertIn(option, out)

    def test_version(self):
        out = self.ok("--version")
        self.assertRegex(out.strip(), r"^attn \d+\.\d+\.\d+")

    def test_devices(self):
        self.assertTrue(self.ok("devices").strip())


class Verify(AttnTestCase):
    def test_default_table_passes_every_check(self):
        out = self.ok("verify")
        rows = {}
        for line in out.splitlines():
            fields = line.split()
            if fields and fields[0] in CHECK_IDS:
                rows[fields[0]] = line
        self.assertEqual(sorted(rows), sorted(CHECK_IDS), out)
        for check_id, line in rows.items():
            self.assertIn(" PASS ", line, "check %s did not pass:\n%s" % (check_id, out))
            self.assertNotIn("FAIL", line)
        self.assertIn("All %d checks passed." % len(CHECK_IDS), out)

    def test_trace_json(self):
        trace_path = self.path("t.json")
        out = self.ok("verify", "--batch", "2", "--export-trace", trace_path)
        self.assertIn(trace_path, out)
        with open(trace_path) as f:
            trace = json.load(f)

        self.assertEqual(trace["schema_version"], 1)
        for key, value in TINY.items():
            self.assertEqual(trace["config"][key], value, key)
        self.assertEqual(trace["weights"], {"source": "seed", "seed": 1})
        B, T, Hq, V, L = 2, 6, TINY["n_heads"], TINY["vocab_size"], TINY["n_layers"]
        self.assertEqual(shape_of(trace["tokens"]), (B, T))
        self.assertEqual(trace["tokens"][0], [1, 2, 3, 4, 5, 6])
        self.assertNotEqual(trace["tokens"][1], trace["tokens"][0])
        self.assertEqual(trace["positions"], list(range(T)))
        self.assertEqual(len(trace["layers"]), L)
        for layer in trace["layers"]:
            probs = layer["probabilities"]
            self.assertEqual(shape_of(probs), (B, Hq, T, T))
            for head in (h for batch in probs for h in batch):
                for t, row in enumerate(head):
                    # float32 rows of 6 sum to 1 within a few ulps; 1e-5 is check e1's bound.
                    self.assertAlmostEqual(sum(row), 1.0, delta=1e-5)
                    self.assertEqual(row[t + 1:], [0.0] * (T - t - 1), "attention to a future token")
        self.assertEqual(shape_of(trace["logits"]), (B, T, V))

        self.assertEqual([c["id"] for c in trace["checks"]], CHECK_IDS)
        for check in trace["checks"]:
            for field in ["name", "compares", "max_abs_error", "tolerance", "passed"]:
                self.assertIn(field, check, check.get("id"))
            self.assertIsInstance(check["name"], str)
            self.assertTrue(check["compares"])
            self.assertIsInstance(check["max_abs_error"], (int, float))
            self.assertIsInstance(check["tolerance"], (int, float))
            self.assertIs(check["passed"], True, check)
        self.assertIs(trace["all_checks_passed"], True)

        # 2 (K and V) x 2 layers x 2 KV heads x 8 channels per token.
        self.assertEqual(trace["cache_payload"]["scalars_per_token"], 2 * 2 * 2 * 8)
        self.assertEqual(trace["cache_payload"]["bytes_per_token_fp32"], 4 * 64)
        self.assertEqual(trace["build"]["platform"], "native")
        self.assertTrue(trace["build"]["compiler"])

    def test_checkpoint_round_trip_is_exact_in_float32(self):
        checkpoint = self.export("checkpoint")
        with open(os.path.join(checkpoint, "config.json")) as f:
            config = json.load(f)
        self.assertEqual(config["architectures"], ["LlamaForCausalLM"])
        self.assertEqual(config["torch_dtype"], "float32")
        self.assertIs(config["tie_word_embeddings"], True)

        seeded, loaded = self.path("seeded.json"), self.path("loaded.json")
        self.ok("verify", "--export-trace", seeded)
        out = self.ok("verify", "--checkpoint", checkpoint, "--export-trace", loaded)
        self.assertIn("All %d checks passed." % len(CHECK_IDS), out)
        with open(seeded) as f:
            seeded_trace = json.load(f)
        with open(loaded) as f:
            loaded_trace = json.load(f)
        self.assertEqual(loaded_trace["weights"]["source"], "checkpoint")
        self.assertEqual(loaded_trace["tokens"], seeded_trace["tokens"])
        # float32 stores the generated weights exactly, so the forward pass is the same to the bit.
        self.assertEqual(loaded_trace["logits"], seeded_trace["logits"])
        self.assertEqual(loaded_trace["layers"], seeded_trace["layers"])

    def test_16bit_checkpoints_verify(self):
        for dtype in ["float16", "bfloat16"]:
            checkpoint = self.export("checkpoint-" + dtype, "--dtype", dtype)
            out = self.ok("verify", "--checkpoint", checkpoint)
            self.assertIn("All %d checks passed." % len(CHECK_IDS), out)

    def test_tokens_with_spaces_and_other_seed(self):
        out = self.ok("verify", "--tokens", " 0 , 31 ,7", "--batch", "1", "--seed", "9")
        self.assertIn("seed 9", out)
        self.assertIn("batch 1 x 3 tokens", out)


# --- error paths: arguments -----------------------------------------------------------

class ArgumentErrors(AttnTestCase):
    def test_token_outside_vocabulary(self):
        self.fails(["verify", "--tokens", "1,2,32"], "32", "vocabulary")

    def test_huge_token(self):
        self.fails(["verify", "--tokens", "1,99999999999999999999999"], "99999999999999999999999")

    def test_negative_token(self):
        self.fails(["verify", "--tokens", "1,-3"], "-3", "negative")

    def test_empty_token_list(self):
        self.fails(["verify", "--tokens", ""], "--tokens")

    def test_empty_entry(self):
        self.fails(["verify", "--tokens", "1,,2"], "--tokens", "empty")

    def test_token_not_a_number(self):
        self.fails(["verify", "--tokens", "1,x"], "'x'", "--tokens")

    def test_single_token(self):
        self.fails(["verify", "--tokens", "5"], "--tokens", "2")

    def test_unknown_flag(self):
        self.fails(["verify", "--bogus"], "--bogus")

    # attn judge (what tools/judge.py calls): its catalogue and cases as JSON, bad requests refused.
    def test_judge(self):
        catalogue = json.loads(run_attn("judge", "--list").stdout)
        self.assertIn("softmax", [e["id"] for e in catalogue])
        cases = json.loads(run_attn("judge", "softmax", "--cases").stdout)
        self.assertEqual(len(cases["cases"]), next(e["cases"] for e in catalogue if e["id"] == "softmax"))
        self.fails(["judge", "nope", "--cases"], "unknown exercise 'nope'")
        self.fails(["judge", "softmax"], "one of --list, --cases or --outputs")
        self.fails(["judge", "--cases"], "needs an EXERCISE")
        self.fails(["judge", "softmax", "--outputs", "/nonexistent.json"], "/nonexistent.json")

        # --outputs - : a learner's results on stdin, one {"value": ...} per case, as judge.py
        # sends them. Softmax computed here in plain Python passes; one value off by 0.01 fails
        # that case only.
        def softmax_rows(rows):
            out = []
            for row in rows:
                values = [float(v) for v in row]  # "-Infinity" is a case's masked entry
                exps = [math.exp(v - max(values)) for v in values]
                out.append([e / sum(exps) for e in exps])
            return out

        def judged(outputs):
            done = subprocess.run([ATTN, "judge", "softmax", "--outputs", "-"], input=json.dumps(outputs),
                                  capture_output=True, text=True, timeout=120)
            self.assertIn(done.returncode, (0, 1), done.stderr)
            return json.loads(done.stdout)

        outputs = [{"value": softmax_rows(case["args"][0])} for case in cases["cases"]]
        report = judged(outputs)
        self.assertTrue(report["passed"], json.dumps(report)[:2000])
        outputs[0]["value"][0][0] += 0.01
        report = judged(outputs)
        self.assertFalse(report["passed"])
        self.assertEqual([c["passed"] for c in report["cases"]], [False] + [True] * (len(outputs) - 1))

    def test_unknown_subcommand(self):
        self.fails(["frobnicate"], "frobnicate")

    def test_no_subcommand(self):
        self.fails([], "subcommand")

    def test_batch_zero(self):
        self.fails(["verify", "--batch", "0"], "--batch", "0")

    def test_batch_too_large(self):
        self.fails(["verify", "--batch", "17"], "--batch", "17")

    def test_seed_not_a_number(self):
        self.fails(["verify", "--seed", "abc"], "--seed", "abc")

    def test_negative_seed(self):
        # The seed is unsigned: -1 must not silently become 18446744073709551615.
        self.fails(["verify", "--seed", "-1"], "--seed", "-1")

    def test_seed_beyond_64_bits(self):
        # 2^64 does not fit the seed; it must not be clamped or wrapped to another seed.
        self.fails(["verify", "--seed", "18446744073709551616"], "--seed", "18446744073709551616")

    def test_seed_is_decimal(self):
        # A seed is a decimal number: "010" is seed 10, not octal 8 (nor is "0x10" hexadecimal 16).
        out = self.ok("verify", "--seed", "010")
        self.assertIn("(seed 10)", out.splitlines()[0])

    def test_export_seed_not_a_number(self):
        self.fails(["export-checkpoint", self.path("c"), "--seed", "abc"], "--seed", "abc")

    def test_unknown_config(self):
        self.fails(["verify", "--config", "huge"], "--config", "huge")

    def test_export_unknown_config(self):
        self.fails(["export-checkpoint", self.path("c"), "--config", "huge"], "--config", "huge")
        self.assertFalse(os.path.exists(self.path("c", "model.safetensors")))

    def test_unknown_dtype(self):
        self.fails(["export-checkpoint", self.path("c"), "--dtype", "float64"], "--dtype", "float64")
        self.assertFalse(os.path.exists(self.path("c", "model.safetensors")))

    def test_export_without_directory(self):
        self.fails(["export-checkpoint"], "dir")

    def test_export_layers_zero(self):
        self.fails(["export-checkpoint", self.path("c"), "--layers", "0"], "--layers", "0")

    def test_missing_checkpoint_directory(self):
        missing = self.path("no-such-checkpoint")
        self.fails(["verify", "--checkpoint", missing], missing)

    def test_checkpoint_is_a_file(self):
        not_a_dir = self.path("file.txt")
        with open(not_a_dir, "w") as f:
            f.write("hello\n")
        self.fails(["verify", "--checkpoint", not_a_dir], not_a_dir)

    def test_trace_in_missing_directory(self):
        # Under the test's own folder, so a stray /nonexistent (or running as root) cannot matter.
        trace = self.path("nonexistent", "dir", "t.json")
        self.fails(["verify", "--export-trace", trace], trace)

    def test_trace_path_is_a_directory(self):
        self.fails(["verify", "--export-trace", self.tmp], self.tmp)

    def test_export_into_unwritable_place(self):
        # /proc refuses new entries even to root.
        self.fails(["export-checkpoint", "/proc/attn-cli-test/checkpoint"], "/proc/attn-cli-test")


# --- error paths: malformed checkpoints -----------------------------------------------

class CheckpointErrors(AttnTestCase):
    """Each test exports a valid tiny checkpoint, breaks one thing, and loads it."""

    def setUp(self):
        super().setUp()
        self.checkpoint = self.export("checkpoint")
        self.model = os.path.join(self.checkpoint, "model.safetensors")
        self.config = os.path.join(self.checkpoint, "config.json")
        with open(self.model, "rb") as f:
            self.blob = f.read()
        (self.header_length,) = struct.unpack("<Q", self.blob[:8])

    def write_model(self, blob):
        with open(self.model, "wb") as f:
            f.write(blob)

    def load_fails(self, *mentions):
        return self.fails(["verify", "--checkpoint", self.checkpoint], *mentions)

    def edit_header(self, edit):
        header, data = read_safetensors(self.model)
        data = edit(header, data) or data
        write_safetensors(self.model, header, data)

    def test_valid_export_loads(self):
        self.ok("verify", "--checkpoint", self.checkpoint)

    def test_truncated_in_data(self):
        self.write_model(self.blob[:len(self.blob) - 1000])
        self.load_fails("model.safetensors", "truncated")

    def test_truncated_inside_header(self):
        self.write_model(self.blob[:8 + self.header_length // 2])
        self.load_fails("model.safetensors", "truncated")

    def test_truncated_inside_length(self):
        self.write_model(self.blob[:5])
        self.load_fails("model.safetensors", "truncated")

    def test_empty_file(self):
        self.write_model(b"")
        self.load_fails("model.safetensors", "truncated")

    def test_header_length_beyond_file(self):
        self.write_model(struct.pack("<Q", len(self.blob)) + self.blob[8:])
        self.load_fails("model.safetensors", "header")

    def test_header_length_absurd(self):
        self.write_model(struct.pack("<Q", 2 ** 63 + 5) + self.blob[8:])
        self.load_fails("model.safetensors", "header")

    def test_header_not_json(self):
        self.write_model(self.blob[:8] + b"@" * self.header_length + self.blob[8 + self.header_length:])
        self.load_fails("model.safetensors", "JSON")

    def test_header_not_an_object(self):
        text = b"[1, 2, 3]"
        text += b" " * (-len(text) % 8)
        self.write_model(struct.pack("<Q", len(text)) + text + self.blob[8 + self.header_length:])
        self.load_fails("model.safetensors", "object")

    def test_swapped_dims(self):
        name = "model.layers.0.mlp.gate_proj.weight"  # stored [out, in] = [96, 32]

        def swap(header, data):
            self.assertEqual(header[name]["shape"], [96, 32])
            header[name]["shape"] = [32, 96]  # same bytes, transposed shape
        self.edit_header(swap)
        self.load_fails(name, "[32, 96]", "[96, 32]")

    def test_shrunk_tensor(self):
        name = "model.norm.weight"  # [32] float32

        def shrink(header, data):
            begin, end = header[name]["data_offsets"]
            header[name]["shape"] = [16]
            header[name]["data_offsets"] = [begin, begin + 16 * 4]  # consistent: 16 floats
        self.edit_header(shrink)
        self.load_fails(name, "[16]", "[32]")

    def test_byte_count_disagrees_with_shape(self):
        name = "model.norm.weight"

        def lie(header, data):
            header[name]["shape"] = [33]
        self.edit_header(lie)
        self.load_fails(name, "bytes")

    def test_dtype_f64(self):
        name = "model.norm.weight"  # 32 floats = 128 bytes = 16 doubles

        def to_f64(header, data):
            header[name]["dtype"] = "F64"
            header[name]["shape"] = [16]
        self.edit_header(to_f64)
        self.load_fails(name, "F64")

    def test_dtype_i8(self):
        name = "model.layers.1.input_layernorm.weight"  # 128 bytes = 128 int8

        def to_i8(header, data):
            header[name]["dtype"] = "I8"
            header[name]["shape"] = [128]
        self.edit_header(to_i8)
        self.load_fails(name, "I8")

    def test_missing_tensor(self):
        name = "model.layers.1.self_attn.v_proj.weight"
        self.edit_header(lambda header, data: header.pop(name) and None)
        self.load_fails(name, "missing")

    def test_extra_tensor(self):
        name = "model.layers.0.self_attn.q_proj.bias"

        def add(header, data):
            header[name] = {"dtype": "F32", "shape": [32], "data_offsets": [len(data), len(data) + 128]}
            return data + bytes(128)
        self.edit_header(add)
        self.load_fails(name, "unexpected")

    def test_rope_buffers_are_ignored(self):
        # The rule of core/checkpoint/llama_tensors.hpp (is_ignored_tensor), the same for attn probe.
        before, after = self.path("before.json"), self.path("after.json")
        self.ok("verify", "--checkpoint", self.checkpoint, "--export-trace", before)
        add_rope_buffers(self.model)
        out = self.ok("verify", "--checkpoint", self.checkpoint, "--export-trace", after)
        self.assertIn("All %d checks passed." % len(CHECK_IDS), out)
        with open(before) as f, open(after) as g:
            self.assertEqual(json.load(f)["logits"], json.load(g)["logits"])

    def test_extra_tensor_beside_rope_buffers(self):
        name = "model.layers.0.mlp.rotary_emb.inv_freq"  # RoPE's buffer where it never lives
        add_rope_buffers(self.model)
        add_tensor(self.model, name, [1.0, 2.0])
        self.load_fails(name, "unexpected")

    def test_offsets_outside_data(self):
        name = "model.norm.weight"

        def move(header, data):
            header[name]["data_offsets"] = [len(data), len(data) + 128]
        self.edit_header(move)
        self.load_fails(name)

    def test_overlapping_tensors(self):
        def overlap(header, data):
            header["model.norm.weight"]["data_offsets"] = header["model.layers.0.input_layernorm.weight"]["data_offsets"]
        self.edit_header(overlap)
        self.load_fails("model.safetensors", "overlap")

    def test_no_safetensors_file(self):
        os.remove(self.model)
        self.load_fails(self.checkpoint, "model.safetensors")

    def test_model_is_a_directory(self):
        os.remove(self.model)
        os.mkdir(self.model)
        self.load_fails("model.safetensors")

    def test_config_not_json(self):
        with open(self.config, "w") as f:
            f.write("{ this is not json\n")
        self.load_fails("config.json", "JSON")

    def test_config_missing(self):
        os.remove(self.config)
        self.load_fails("config.json")

    def test_config_missing_field(self):
        with open(self.config) as f:
            config = json.load(f)
        del config["hidden_size"]
        with open(self.config, "w") as f:
            json.dump(config, f)
        self.load_fails("config.json", "hidden_size")

    def test_config_field_wrong_type(self):
        with open(self.config) as f:
            config = json.load(f)
        config["num_hidden_layers"] = "two"
        with open(self.config, "w") as f:
            json.dump(config, f)
        self.load_fails("config.json", "num_hidden_layers")

    def test_config_disagrees_with_tensors(self):
        with open(self.config) as f:
            config = json.load(f)
        config["intermediate_size"] = 64  # the tensors are 96 wide
        with open(self.config, "w") as f:
            json.dump(config, f)
        self.load_fails("mlp", "96", "64")

    def test_config_inconsistent_heads(self):
        with open(self.config) as f:
            config = json.load(f)
        config["num_key_value_heads"] = 3  # 4 query heads cannot share 3 KV heads
        with open(self.config, "w") as f:
            json.dump(config, f)
        self.load_fails("heads", "(3)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
