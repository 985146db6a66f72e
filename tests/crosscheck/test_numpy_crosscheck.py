"""The C++ core against an independent float64 NumPy Llama (numpy_llama.py).

`attn` exports its deterministic model as a Hugging Face checkpoint and a trace
of the same forward pass; NumPy reads the checkpoint with its own parser and
recomputes every logit and every attention probability of the trace.

Tolerance: 1e-5 absolute for logits and probabilities. The core runs in float32
and NumPy in float64 from the same stored weights, so the whole difference is
float32 rounding. Probabilities lie in [0, 1] and measure ~4e-7 apart. Logits
reach |30|, where a float32 ulp is 1.9e-6 (3.8e-6 above 32): they measure
6e-6 .. 9e-6 apart, up to about twice what a plain float32 NumPy run of the same
equations gives (3e-6 .. 8e-6, printed as the "float32 floor"); the core sums
its dot products left to right, NumPy pairwise. A wrong RoPE pairing, mask or
KV head mapping moves logits by O(1), orders of magnitude above the bound.

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/crosscheck/test_numpy_crosscheck.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
except ImportError as error:  # a pyenv or venv python without numpy
    raise ImportError("numpy is not importable from %s: install python3-numpy (apt-get install python3-numpy) "
                      "and run the test with /usr/bin/python3" % sys.executable) from error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import numpy_llama  # noqa: E402  (after the numpy check, so its message wins)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTN = os.environ.get("ATTN", os.path.join(REPO, "build", "native", "native", "attn"))
TOLERANCE = 1e-5  # see the module docstring


def attn(*args):
    """Runs attn; fails the test with its output unless it exits 0."""
    result = subprocess.run([ATTN, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError("attn %s exited %d\nstdout:\n%s\nstderr:\n%s"
                             % (" ".join(args), result.returncode, result.stdout, result.stderr))
    return result.stdout


def max_abs(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise AssertionError("shape %s vs %s" % (a.shape, b.shape))
    return float(np.max(np.abs(a - b)))


class NumpyCrosscheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(ATTN, os.X_OK):
            raise AssertionError("attn binary not found at %s: set ATTN to build/<preset>/native/attn" % ATTN)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="attn-crosscheck-")
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def compare(self, label, checkpoint, trace):
        """Recomputes the trace's logits and probabilities from the checkpoint; asserts the tolerance."""
        config, weights = numpy_llama.load_checkpoint(checkpoint)
        tokens = np.asarray(trace["tokens"])  # [B, T]
        logits, probs = numpy_llama.forward(config, weights, tokens)             # [B, T, V], L x [B, Hq, T, T]
        logits32, _ = numpy_llama.forward(config, weights, tokens, np.float32)  # the float32 rounding floor

        self.assertEqual(len(trace["layers"]), config["n_layers"])
        logit_error = max_abs(trace["logits"], logits)
        prob_error = max(max_abs(layer["probabilities"], p) for layer, p in zip(trace["layers"], probs))
        floor = max_abs(logits32, logits)
        print("\n  %-34s B=%d T=%-2d  max|logit| %5.2f  logits %.3e  probabilities %.3e  (float32 floor %.3e)"
              % (label, tokens.shape[0], tokens.shape[1], np.max(np.abs(logits)), logit_error, prob_error, floor),
              file=sys.stderr)
        self.assertLessEqual(logit_error, TOLERANCE, "%s: logits differ from NumPy by %.3e" % (label, logit_error))
        self.assertLessEqual(prob_error, TOLERANCE, "%s: probabilities differ from NumPy by %.3e" % (label, prob_error))
        return logit_error, prob_error

    def seeded_run(self, label, seed, tokens, batch):
        """`attn verify` with generated weights vs NumPy on the float32 export of the same seed."""
        checkpoint, trace_path = self.path("checkpoint"), self.path("trace.json")
        attn("verify", "--seed", str(seed), "--tokens", tokens, "--batch", str(batch), "--export-trace", trace_path)
        attn("export-checkpoint", checkpoint, "--seed", str(seed))
        with open(trace_path) as f:
            trace = json.load(f)
        self.assertEqual(trace["weights"], {"source": "seed", "seed": seed})
        self.assertEqual(np.asarray(trace["tokens"]).shape, (batch, len(tokens.split(","))))
        self.compare(label, checkpoint, trace)

    def checkpoint_run(self, dtype):
        """`attn verify --checkpoint` on a 16-bit export vs NumPy on the same rounded weights."""
        checkpoint, trace_path = self.path("checkpoint-" + dtype), self.path("trace-" + dtype + ".json")
        attn("export-checkpoint", checkpoint, "--dtype", dtype)
        with open(os.path.join(checkpoint, "config.json")) as f:
            self.assertEqual(json.load(f)["torch_dtype"], dtype)
        attn("verify", "--checkpoint", checkpoint, "--tokens", "1,2,3,4,5,6", "--batch", "2",
             "--export-trace", trace_path)
        with open(trace_path) as f:
            trace = json.load(f)
        self.compare("checkpoint " + dtype, checkpoint, trace)

    def test_float32_default_seed(self):
        self.seeded_run("float32, seed 1", 1, "1,2,3,4,5,6", 2)

    def test_bfloat16_checkpoint(self):
        self.checkpoint_run("bfloat16")

    def test_float16_checkpoint(self):
        self.checkpoint_run("float16")

    def test_float32_other_seed_long_batch(self):
        tokens = ",".join(str((5 * i + 3) % 32) for i in range(20))  # 20 ids, every residue once mod 32
        self.seeded_run("float32, seed 2, 20 tokens", 2, tokens, 3)

    def test_wrong_rope_pairing_is_caught(self):
        """The bound has power: pairing channels (2i, 2i+1) instead of Hugging Face's
        (i, i + dh/2) moves the logits far beyond the tolerance."""
        checkpoint, trace_path = self.path("checkpoint"), self.path("trace.json")
        attn("export-checkpoint", checkpoint)
        attn("verify", "--export-trace", trace_path)
        with open(trace_path) as f:
            trace = json.load(f)
        config, weights = numpy_llama.load_checkpoint(checkpoint)

        def interleaved_rope(x, positions, theta):  # x: [B, H, T, dh]
            dh = x.shape[-1]
            angles = np.outer(positions, theta ** (-np.arange(0, dh, 2) / dh))  # [T, dh/2]
            even, odd = x[..., 0::2], x[..., 1::2]
            out = np.empty_like(x)
            out[..., 0::2] = even * np.cos(angles) - odd * np.sin(angles)
            out[..., 1::2] = even * np.sin(angles) + odd * np.cos(angles)
            return out

        original = numpy_llama.apply_rope
        numpy_llama.apply_rope = interleaved_rope
        try:
            wrong, _ = numpy_llama.forward(config, weights, trace["tokens"])
        finally:
            numpy_llama.apply_rope = original
        self.assertGreater(max_abs(trace["logits"], wrong), 1e3 * TOLERANCE)

    def test_reader_matches_export_bits(self):
        """The hand-written safetensors reader sees what the writer stored: a bf16 value is
        its float32 with the low 16 bits rounded off, and the exports agree to that rounding."""
        f32, bf16 = self.path("f32"), self.path("bf16")
        attn("export-checkpoint", f32)
        attn("export-checkpoint", bf16, "--dtype", "bfloat16")
        exact = numpy_llama.read_safetensors(os.path.join(f32, "model.safetensors"))
        rounded = numpy_llama.read_safetensors(os.path.join(bf16, "model.safetensors"))
        self.assertEqual(sorted(exact), sorted(rounded))
        for name, values in exact.items():
            self.assertEqual(values.shape, rounded[name].shape, name)
            # bfloat16 keeps 8 significant bits (7 stored): rounding moves a value by at
            # most half an ulp, 2^-8 of its magnitude.
            bound = np.abs(values) * 2.0 ** -8
            self.assertTrue(np.all(np.abs(values - rounded[name]) <= bound), name)
            self.assertTrue(np.any(values != rounded[name]), name + ": bf16 export was not rounded at all")


if __name__ == "__main__":
    unittest.main(verbosity=2)
