"""`attn bench cpu --quick --json`: runs in seconds, prints one valid JSON report,
and every attention row was validated against the reference before it was timed.
Also: `attn bench memory` on tiny sizes, and bad bench flags exit 2 with one line.

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_bench.py
Standard library only. The NumPy/PyTorch peers run when Debian's python3-numpy
and python3-torch are installed; when they are not, their rows must be absent and
the report must say SKIPPED.
"""

import json
import os
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTN = os.environ.get("ATTN", os.path.join(REPO, "build", "native", "native", "attn"))
OUR_KERNELS = {"grouped", "streaming", "rows", "steps", "reference"}


def run_attn(*args):
    return subprocess.run([ATTN, *args], capture_output=True, text=True, timeout=240)


class BenchCpuQuick(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.result = run_attn("bench", "cpu", "--quick", "--json")
        cls.report = json.loads(cls.result.stdout) if cls.result.returncode == 0 else None

    def test_exit_status_and_json(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertIsInstance(self.report, dict)
        for key in ("build", "kernel_isa", "threads", "shape", "policy", "tolerance", "rows", "peers"):
            self.assertIn(key, self.report)
        self.assertEqual(self.report["threads"], 1)

    def test_every_attention_row_validated_then_timed(self):
        rows = [r for r in self.report["rows"] if r["case"] not in ("model", "ceiling")]
        ours = [r for r in rows if r["kernel"] in OUR_KERNELS]
        # 2 prefill + 2 decode cases x 5 kernels, 2 recompute cases x 4 kernels.
        self.assertEqual(len(ours), 2 * 5 + 2 * 5 + 2 * 4)
        for row in rows:
            with self.subTest(case=row["case"], T=row["T"], S=row["S"], kernel=row["kernel"]):
                self.assertTrue(row["validation"]["passed"], row)
                self.assertLessEqual(row["validation"]["max_error"], row["validation"]["tolerance"])
                self.assertGreater(row["validation"]["rows_checked"], 0)
                self.assertGreater(row["ms"], 0)
                self.assertGreaterEqual(len(row["runs_ms"]), 1)
        cases = {(r["case"], r["T"], r["S"]) for r in ours}
        self.assertIn(("decode", 1, 70), cases)
        self.assertIn(("recompute", 70, 70), cases)

    def test_gflops_count_only_the_visible_cells(self):
        shape = self.report["shape"]
        for row in self.report["rows"]:
            if row["kernel"] not in OUR_KERNELS or "ms" not in row:
                continue
            T, S = row["T"], row["S"]
            # Row t sees S - T + t + 1 keys; each seen key costs 2 dh (score) + 2 dh (P @ V).
            visible = sum(S - T + t + 1 for t in range(T))
            flops = 4 * shape["B"] * shape["Hq"] * shape["dh"] * visible
            with self.subTest(case=row["case"], T=T, S=S, kernel=row["kernel"]):
                self.assertAlmostEqual(row["gflops"], flops / (row["ms"] * 1e6), delta=1e-9 * row["gflops"])

    def test_ceiling_row(self):
        ceiling = [r for r in self.report["rows"] if r["case"] == "ceiling"]
        self.assertEqual([r["kernel"] for r in ceiling], ["multiply_add"])
        self.assertGreater(ceiling[0]["gflops"], 0)
        self.assertGreater(ceiling[0]["ms"], 0)

    def test_model_rows(self):
        model = {r["kernel"]: r for r in self.report["rows"] if r["case"] == "model"}
        self.assertEqual(set(model), {"tiny_prefill", "tiny_decode_step"})
        for row in model.values():
            self.assertGreater(row["per_second"], 0)

    def test_peers_present_or_visibly_skipped(self):
        peers = self.report["peers"]
        for name, kernel in (("numpy", "numpy_einsum"), ("torch", "torch_eager")):
            rows = [r for r in self.report["rows"] if r["kernel"] == kernel]
            if "skipped" in peers[name]:
                self.assertTrue(peers[name]["skipped"].startswith("SKIPPED"))
                self.assertEqual(rows, [])
            else:
                self.assertIn("version", peers[name])
                self.assertEqual(len(rows), 4)  # 2 prefill + 2 decode cases


class BenchOther(unittest.TestCase):
    def test_table_without_peers(self):
        result = run_attn("bench", "cpu", "--quick", "--no-peers", "--kernels", "grouped,streaming")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("grouped", result.stdout)
        self.assertIn("cached decode vs recomputing the prefix", result.stdout)
        self.assertRegex(result.stdout, r"this build's ceiling \(multiply-adds on registers, \w+\) [0-9.]+, grouped reaches [0-9]+% of it")
        self.assertIn("0 failed", result.stdout)

    def test_memory_tiny(self):
        result = run_attn("bench", "memory", "--json", "--streaming-t", "64,256", "--reference-t", "64")
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual([(r["kernel"], r["T"]) for r in report["rows"]],
                         [("reference", 64), ("streaming", 64), ("streaming", 256)])
        for row in report["rows"]:
            self.assertNotIn("failed", row)
            self.assertGreaterEqual(row["peak_mb"], 0)

    def test_bad_flags_exit_2_with_one_line(self):
        for args in (["--prefill", "0"], ["--prefill", "abc"], ["--kernels", "fastest"], ["--runs", "0"]):
            with self.subTest(args=args):
                result = run_attn("bench", "cpu", "--quick", "--no-peers", *args)
                self.assertEqual(result.returncode, 2)
                lines = result.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertTrue(lines[0].startswith("attn:"), lines[0])


if __name__ == "__main__":
    if not os.access(ATTN, os.X_OK):
        sys.exit("attn binary not found at %s: set ATTN to build/<preset>/native/attn" % ATTN)
    unittest.main(verbosity=2)
