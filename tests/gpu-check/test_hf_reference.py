"""tests/cuda/hf_reference.py without transformers: the NumPy reference (label reference).

The comparison scripts/gpu-check.sh runs on the GPU machine (transformers vs attn
probe on the CPU and the GPU) is the same code as here, with numpy_llama.py's
float64 Llama as the reference and the tiny model (vocabulary 32, 2 layers) so it
takes a second. It must PASS on the probe's own trace, and report FAIL when one
number of the trace is moved by what a real bug would move it:
  - one attention probability by 1e-3 (ten times the 1e-4 bound),
  - the last-position logit of one token by 1e-2 (ten times the 1e-3 bound),
  - one continuation id changed.
Where torch or transformers is missing (here), --reference transformers must say
SKIPPED and exit 77.

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/gpu-check/test_hf_reference.py
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "cuda", "hf_reference.py")
REPO = os.path.dirname(os.path.dirname(HERE))
ATTN = os.environ.get("ATTN", os.path.join(REPO, "build", "native", "native", "attn"))


def reference(*args):
    result = subprocess.run([sys.executable, SCRIPT, "--attn", ATTN, *args], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout + result.stderr


class HfReferenceWithNumpy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="attn-hf-reference-test-")
        cls.work = cls.tmp.name
        cls.checkpoint = os.path.join(cls.work, "checkpoint")
        cls.rc, cls.output = reference("--reference", "numpy", "--config", "tiny", "--layers", "", "--devices", "cpu",
                                       "--work", cls.work, "--checkpoint", cls.checkpoint)
        with open(os.path.join(cls.work, "hf-probe-cpu.json")) as f:
            cls.trace = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def broken(self, name, change):
        """Runs the comparison on a copy of the probe's trace with one change; returns (rc, output)."""
        trace = copy.deepcopy(self.trace)
        change(trace)
        path = os.path.join(self.work, name + ".json")
        with open(path, "w") as f:
            json.dump(trace, f)
        return reference("--reference", "numpy", "--config", "tiny", "--layers", "", "--devices", "cpu",
                         "--checkpoint", self.checkpoint, "--trace", "cpu=" + path)

    def test_probe_matches_numpy(self):
        print(self.output.strip())
        self.assertEqual(self.rc, 0, self.output)
        line = self.output.strip().splitlines()[0]
        self.assertIn("numpy float64", line)
        self.assertIn("continuation cpu 8/8 equal", line)
        self.assertTrue(line.endswith(": PASS"), line)

    def test_one_probability_moved(self):
        def change(trace):
            trace["layers"][1]["probabilities"][0][2][5][3] += 1e-3
        rc, output = self.broken("probability", change)
        self.assertEqual(rc, 1, output)
        self.assertIn(": FAIL", output)
        self.assertIn("probabilities differ by 1.0e-03", output)

    def test_one_logit_moved(self):
        def change(trace):
            trace["logits"][0][0][7] += 1e-2
        rc, output = self.broken("logit", change)
        self.assertEqual(rc, 1, output)
        self.assertIn("logits differ by 1.0e-02", output)

    def test_one_continuation_id_changed(self):
        def change(trace):
            ids = trace["probe"]["continuation"]["ids"]
            ids[3] = (ids[3] + 1) % trace["config"]["vocab_size"]
        rc, output = self.broken("continuation", change)
        self.assertEqual(rc, 1, output)
        self.assertIn("continuation cpu 3/8 equal", output)
        self.assertIn("continuation parts at step 4", output)

    def test_transformers_missing_is_skipped(self):
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
            self.skipTest("transformers is installed here")
        except ImportError:
            pass
        rc, output = reference("--reference", "transformers", "--checkpoint", self.checkpoint)
        self.assertEqual(rc, 77, output)
        self.assertTrue(output.startswith("SKIPPED: transformers reference"), output)


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    unittest.main(verbosity=2)
