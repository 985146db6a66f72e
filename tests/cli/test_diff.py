"""attn diff: a learner's tensors against the core's forward.

The learner is tests/diff/numpy_llama.py, an independent NumPy Llama with a switch
for each known mistake, reading the tiny model that attn export-checkpoint writes.

- Its correct run agrees on every tensor (exit 0), in float64 and float32, as .npz
  and as .safetensors, on one sequence and on two.
- Each mistake makes attn diff stop at the tensor the mistake first changes (the
  NumPy model's own FIRST_CHANGED, found by comparing its runs) and name it (exit 1);
  the two that only a second pass shows (positions restarting, the mask not shifted)
  after 3 tokens through the KV cache (--cached 3), where a correct learner agrees;
  a head read from the embedding on a checkpoint with its own lm_head.
- A value nudged by hand in a correct file diverges at that tensor and index, and no
  mistake is named; only logits given: the divergence, and the advice to give more.
- Bad input exits 2 with one line: unknown names, a layer the model lacks, wrong
  shapes (expected and given), compressed or non-float archives, neither format,
  a truncated file, tokens outside the vocabulary or of unequal lengths.
- numpy_llama's self-check passes (each mistake first changes the tensor named).
- Where transformers is installed, tools/examples/transformers_dump.py (LlamaForCausalLM
  with forward hooks) agrees too; elsewhere that test prints SKIPPED.

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_diff.py
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "diff"))
from test_cli import ATTN, AttnTestCase, run_attn  # noqa: E402
import numpy_llama  # noqa: E402

TOKENS = "1,5,9,2,7,3,11,4;3,3,8,0,14,6,2,31"
ROWS = [[1, 5, 9, 2, 7, 3, 11, 4], [3, 3, 8, 0, 14, 6, 2, 31]]


class DiffTest(AttnTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="attn-diff-")
        cls.model = os.path.join(cls.tmp, "tiny")
        subprocess.run([ATTN, "export-checkpoint", cls.model], check=True, capture_output=True)
        # eps 0.5: eps outside the root moves RMSNorm's output by ~20% (at 1e-6, by 5e-7: within float32's tolerance).
        cls.model_eps = os.path.join(cls.tmp, "tiny-eps")
        numpy_llama.export_with_eps(ATTN, cls.model_eps, 0.5)
        # An lm_head of its own: a head read from the embedding is then a mistake to name.
        cls.model_untied = numpy_llama.export_untied(ATTN, os.path.join(cls.tmp, "tiny-untied"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def save(self, name, tensors):
        path = os.path.join(self.tmp, name)
        if name.endswith(".npz"):
            np.savez(path, **tensors)
        else:
            from anatomy_dump import AnatomyDump
            dump = AnatomyDump()
            for key, value in tensors.items():
                dump.save(key, value)
            dump.write(path)
        return path

    def learner(self, name, model=None, rows=ROWS, dtype="float64", mistakes=(), cached=0):
        return self.save(name, numpy_llama.run(model or self.model, rows, dtype=dtype, mistakes=mistakes, cached=cached))

    def diff(self, theirs, tokens=TOKENS, model=None, cached=0):
        result = run_attn("diff", "--checkpoint", model or self.model, "--tokens", tokens, "--theirs", theirs, "--json",
                          "--cached", str(cached))
        self.assertIn(result.returncode, (0, 1), result.stderr)
        return result.returncode, json.loads(result.stdout)

    def test_a_correct_learner_agrees(self):
        for dtype in ("float64", "float32"):
            for ending in (".npz", ".safetensors"):
                with self.subTest(dtype=dtype, file=ending):
                    code, report = self.diff(self.learner("ok-" + dtype + ending, dtype=dtype))
                    self.assertEqual(code, 0, json.dumps(report["compared"], indent=1))
                    self.assertTrue(report["agrees"])
                    self.assertEqual(len(report["compared"]), 1 + 14 * 2 + 2)  # every tensor of the table
                    self.assertEqual(report["not_given"], [])
                    self.assertIsNone(report["first_divergence"])
                    for c in report["compared"]:
                        self.assertEqual(c["precision"], dtype)
                        self.assertEqual(c["mismatches"], 0)
        # One sequence, a few tensors given: the others are listed as not given.
        path = self.save("some.npz", {k: v for k, v in numpy_llama.run(self.model, ROWS[:1]).items() if k in ("embed", "logits")})
        code, report = self.diff(path, tokens="1,5,9,2,7,3,11,4")
        self.assertEqual(code, 0)
        self.assertEqual([c["name"] for c in report["compared"]], ["embed", "logits"])
        self.assertEqual(len(report["not_given"]), 29)

    def test_each_mistake_is_found_and_named(self):
        for mistake in numpy_llama.MISTAKES:
            with self.subTest(mistake=mistake):
                model = {"rmsnorm_eps_outside_sqrt": self.model_eps, "head_tied_to_embedding": self.model_untied}.get(mistake, self.model)
                cached = numpy_llama.CACHED if mistake in numpy_llama.CACHE_MISTAKES else 0
                code, report = self.diff(self.learner("m.npz", model=model, mistakes=(mistake,), cached=cached), model=model, cached=cached)
                self.assertEqual(code, 1)
                self.assertFalse(report["agrees"])
                self.assertEqual(report["first_divergence"]["tensor"], numpy_llama.FIRST_CHANGED[mistake])
                self.assertIsNotNone(report["diagnosis"], "tried %s" % report["mistakes_tried"])
                self.assertEqual(report["diagnosis"]["mistake"], mistake)
                self.assertIn(mistake, report["mistakes_tried"])
        # The cache's mistakes are only tried after a cache (nothing to shift without one).
        code, report = self.diff(self.learner("r.npz", mistakes=("rope_pairing_swapped",)))
        self.assertNotIn("positions_restart", report["mistakes_tried"])
        # float32 too: the tolerance follows the learner's precision.
        code, report = self.diff(self.learner("m32.safetensors", dtype="float32", mistakes=("kv_head_modulo",)))
        self.assertEqual((code, report["diagnosis"]["mistake"]), (1, "kv_head_modulo"))

    def test_an_untied_checkpoint(self):
        code, report = self.diff(self.learner("untied.npz", model=self.model_untied), model=self.model_untied)
        self.assertEqual(code, 0, json.dumps(report["compared"], indent=1))
        # On a tied checkpoint there is no other matrix to have used: the mistake is not tried.
        code, report = self.diff(self.save("logits-off.npz", {"logits": numpy_llama.run(self.model, ROWS)["logits"] + 1}))
        self.assertEqual(code, 1)
        self.assertEqual(report["mistakes_tried"], [])

    def test_after_a_cache(self):
        # The second pass: 5 new tokens over 8 keys; a correct learner agrees, and its
        # score cells past each query's own position (N + row) are not compared.
        tensors = numpy_llama.run(self.model, ROWS, cached=numpy_llama.CACHED)
        self.assertEqual(tensors["layers.0.scores"].shape, (2, 4, 5, 8))
        code, report = self.diff(self.save("cached.npz", tensors), cached=numpy_llama.CACHED)
        self.assertEqual(code, 0, json.dumps(report["compared"], indent=1))
        self.assertEqual(report["cached"], numpy_llama.CACHED)
        tensors["layers.1.scores"][1, 2, 0, 4] = 1e9   # query 0 is position 3: key 4 is masked
        self.assertEqual(self.diff(self.save("masked-cached.npz", tensors), cached=numpy_llama.CACHED)[0], 0)
        tensors["layers.1.scores"][1, 2, 0, 3] += 1    # key 3 is the query itself: compared
        code, report = self.diff(self.save("seen-cached.npz", tensors), cached=numpy_llama.CACHED)
        self.assertEqual((code, report["first_divergence"]["index"]), (1, [1, 2, 0, 3]))
        # Forgetting --cached: the shapes say what was expected.
        result = run_attn("diff", "--checkpoint", self.model, "--tokens", TOKENS, "--theirs", os.path.join(self.tmp, "cached.npz"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("'embed' has shape [2, 5, 32]; for 2 x 8 tokens it must be [2, 8, 32]", result.stderr)
        result = run_attn("diff", "--checkpoint", self.model, "--tokens", TOKENS, "--theirs", os.path.join(self.tmp, "cached.npz"), "--cached", "8")
        self.assertEqual((result.returncode, result.stderr.strip()), (2, "attn: --cached 8 leaves no token of the 8 to compare"))

    def test_the_text_report(self):
        path = self.learner("rope.npz", mistakes=("rope_pairing_swapped",))
        result = run_attn("diff", "--checkpoint", self.model, "--tokens", TOKENS, "--theirs", path)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("First divergence: layers.0.q_rope, layer 0, sequence 0, head 0, position 1", result.stdout)
        self.assertIn("Diagnosis: rope_pairing_swapped: RoPE rotating adjacent channels", result.stdout)
        self.assertRegex(result.stdout, r"layers\.0\.k_rope +float64 .* DIVERGES")
        self.assertRegex(result.stdout, r"layers\.0\.q +float64 .* agrees")

    def test_a_value_nudged_by_hand(self):
        tensors = numpy_llama.run(self.model, ROWS)
        tensors["layers.1.ffn_out"][1, 5, 7] += 1e-3  # sequence 1, position 5, channel 7
        code, report = self.diff(self.save("nudged.npz", tensors))
        self.assertEqual(code, 1)
        d = report["first_divergence"]
        self.assertEqual((d["tensor"], d["layer"], d["sequence"], d["position"], d["channel"]), ("layers.1.ffn_out", 1, 1, 5, 7))
        self.assertEqual(d["index"], [1, 5, 7])
        self.assertAlmostEqual(d["theirs"] - d["ours"], 1e-3, places=9)
        self.assertIsNone(report["diagnosis"])
        # Below the float64 tolerance (rtol 1e-8), a nudge is not a divergence.
        tensors = numpy_llama.run(self.model, ROWS)
        tensors["logits"][0, 0, 0] *= 1 + 1e-10
        self.assertEqual(self.diff(self.save("tiny-nudge.npz", tensors))[0], 0)
        # Masked score cells (a key after its query) are not compared.
        tensors = numpy_llama.run(self.model, ROWS)
        tensors["layers.0.scores"][0, 0, 2, 5] = 1e9
        self.assertEqual(self.diff(self.save("masked.npz", tensors))[0], 0)

    def test_only_logits_given(self):
        tensors = numpy_llama.run(self.model, ROWS, mistakes=("scale_missing",))
        result = run_attn("diff", "--checkpoint", self.model, "--tokens", TOKENS, "--theirs", self.save("logits.npz", {"logits": tensors["logits"]}))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("First divergence: logits", result.stdout)
        self.assertIn("give the ones before it", result.stdout)

    def test_bad_input(self):
        ok = self.learner("ok.npz")
        zeros = lambda *shape: np.zeros(shape)  # noqa: E731
        np.savez_compressed(os.path.join(self.tmp, "compressed.npz"), logits=zeros(2, 8, 32))
        with open(ok, "rb") as f, open(os.path.join(self.tmp, "cut.npz"), "wb") as g:
            g.write(f.read()[:1000])
        cases = [
            ([TOKENS, self.save("unknown.npz", {"layers.0.query": zeros(2, 4, 8, 8)})], "'layers.0.query' is not a tensor attn diff knows"),
            ([TOKENS, self.save("layer.npz", {"layers.2.q": zeros(2, 4, 8, 8)})], "the model has 2 layers"),
            ([TOKENS, self.save("shape.npz", {"layers.0.q": zeros(2, 8, 4, 8)})],
             "'layers.0.q' has shape [2, 8, 4, 8]; for 2 x 8 tokens it must be [2, 4, 8, 8] (sequence, head, position, channel)"),
            ([TOKENS, self.save("ints.npz", {"logits": np.zeros((2, 8, 32), dtype=np.int64)})], "float32 or float64 expected"),
            ([TOKENS, os.path.join(self.tmp, "compressed.npz")], "np.savez_compressed"),
            ([TOKENS, os.path.join(self.tmp, "cut.npz")], "not a complete zip archive"),
            ([TOKENS, os.path.join(self.model, "config.json")], "neither a NumPy .npz archive nor a safetensors file"),
            ([TOKENS, os.path.join(self.tmp, "missing.npz")], "cannot open"),
            (["1,5,99", ok], "token id 99 is outside the vocabulary"),
            (["1,5,9;2,7", ok], "all must be equally long"),
            (["1,5,9,2", ok], "for 1 x 4 tokens it must be"),
        ]
        for (tokens, theirs), message in cases:
            with self.subTest(message=message):
                result = run_attn("diff", "--checkpoint", self.model, "--tokens", tokens, "--theirs", theirs)
                self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
                self.assertEqual(result.stdout, "")
                lines = result.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertIn(message, lines[0])

    def test_transformers_as_the_learner(self):
        # tools/examples/transformers_dump.py: LlamaForCausalLM's own tensors, by forward hooks, agree.
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError:
            print("SKIPPED: transformers is not installed (the example needs torch and transformers)")
            self.skipTest("transformers is not installed")
        out = os.path.join(self.tmp, "hf.npz")
        example = os.path.join(HERE, "..", "..", "tools", "examples", "transformers_dump.py")
        subprocess.run([sys.executable, example, "--checkpoint", self.model, "--tokens", TOKENS, "--out", out], check=True, timeout=300)
        code, report = self.diff(out)
        self.assertEqual(code, 0, json.dumps(report["compared"], indent=1))
        self.assertIn("layers.1.probs", [c["name"] for c in report["compared"]])

    def test_the_numpy_model_checks_itself(self):
        result = subprocess.run([sys.executable, os.path.join(HERE, "..", "diff", "numpy_llama.py"), "--self-check", "--attn", ATTN],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
