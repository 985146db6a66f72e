"""`attn bench cpu --quick`: runs in seconds, prints its table and one valid JSON
report, and every attention row, ours and the peers', was validated against a
reference before it was timed. The peers name the BLAS they run on; a peer that
computes something else fails validation and is not timed; without PyTorch its rows
are absent and the report says SKIPPED and how to install it. Also: `attn bench
memory` on tiny sizes, and bad bench flags exit 2 with one line.

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_bench.py
Standard library only. The NumPy/PyTorch peers run when Debian's python3-numpy
and python3-torch are installed. The cases that change a peer run a wrapper around
native/bench/peers.py, written to a temporary folder, that replaces one peer (or
hides PyTorch, or stands PyTorch's documented reference in for
scaled_dot_product_attention); they need NumPy, and the SDPA cases PyTorch, and say
SKIPPED without them.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTN = os.environ.get("ATTN", os.path.join(REPO, "build", "native", "native", "attn"))
OUR_KERNELS = {"grouped", "streaming", "rows", "steps", "reference"}
PEER_KERNELS = {"numpy": ["numpy_matmul", "numpy_einsum"], "torch": ["torch_eager", "torch_sdpa"]}
PEER_CASES = 4  # 2 prefill + 2 decode cases in --quick
REFERENCE_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/blas"  # Debian's libblas3


def run_attn(*args, env=None):
    return subprocess.run([ATTN, *args], capture_output=True, text=True, timeout=240, env=env)


def run_with_peers_script(body, *args):
    """`attn bench cpu --quick --kernels grouped` with peers.py changed by `body` (Python,
    run after `import peers`): (result, report). The table is on result.stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, "peers_changed.py"), os.path.join(tmp, "report.json")
        with open(script, "w") as f:
            f.write("import sys\nsys.path.insert(0, %r)\nimport peers  # sets one thread before NumPy loads\n%s\n"
                    "peers.main()\n" % (os.path.join(REPO, "native", "bench"), textwrap.dedent(body)))
        result = run_attn("bench", "cpu", "--quick", "--kernels", "grouped", "--peers-script", script, "--out", out, *args)
        report = None
        if os.path.exists(out):
            with open(out) as f:
                report = json.load(f)
    return result, report


def numpy_present():
    return subprocess.run(["/usr/bin/python3", "-c", "import numpy"], capture_output=True).returncode == 0


def table_rows(table, title):
    """The header and rows of the table under the line that starts with `title`: the
    lines from the first that starts with "case" to the next blank line."""
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    header = next(i for i in range(start, len(lines)) if lines[i].startswith("case"))
    end = next((i for i in range(header, len(lines)) if not lines[i].strip()), len(lines))
    return lines[header], [line for line in lines[header + 1:end] if not line.startswith("GFLOP/s")]


class BenchCpuQuick(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.json")
            cls.result = run_attn("bench", "cpu", "--quick", "--out", out)
            cls.report = None
            if os.path.exists(out):  # written whatever the exit status: the tests show what failed
                with open(out) as f:
                    cls.report = json.load(f)

    def test_exit_status_and_json(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertIsInstance(self.report, dict)
        for key in ("build", "kernel_isa", "threads", "shape", "policy", "tolerance", "rows", "peers", "machine"):
            self.assertIn(key, self.report)
        self.assertEqual(self.report["threads"], 1)

    def test_machine_and_load_average(self):
        machine = self.report["machine"]
        self.assertGreaterEqual(machine["hardware_threads"], 1)
        for when in ("start", "end"):
            self.assertEqual(len(machine["load_average"][when]), 3)
        self.assertIn("machine: %s, %d hardware threads; load average %.2f at the start, %.2f at the end"
                      % (machine["cpu"], machine["hardware_threads"], machine["load_average"]["start"][0],
                         machine["load_average"]["end"][0]), self.result.stdout)

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
        self.assertRegex(self.result.stdout, r"grouped reaches [0-9]+% of it")

    def test_model_rows(self):
        model = {r["kernel"]: r for r in self.report["rows"] if r["case"] == "model"}
        self.assertEqual(set(model), {"tiny_prefill", "tiny_decode_step"})
        for row in model.values():
            self.assertGreater(row["per_second"], 0)

    def test_peers_present_or_visibly_skipped(self):
        peers = self.report["peers"]
        for library, names in PEER_KERNELS.items():
            p = peers[library]
            for name in names:
                rows = [r for r in self.report["rows"] if r["kernel"] == name]
                listed = [k for k in p.get("kernels", []) if k["name"] == name]
                with self.subTest(library=library, kernel=name):
                    if "skipped" in p or (listed and "skipped" in listed[0]):
                        why = p.get("skipped") or listed[0]["skipped"]
                        self.assertTrue(why.startswith("SKIPPED"), why)
                        self.assertIn(why, self.result.stdout)  # the table says why
                        self.assertEqual(rows, [])
                    else:
                        self.assertIn("version", p)
                        self.assertEqual(len(listed), 1)
                        self.assertTrue(listed[0]["about"])
                        self.assertEqual(len(rows), PEER_CASES)
                        self.assertIn("%s (%s)" % (name, listed[0]["about"]), self.result.stdout)
        if "skipped" in peers["torch"]:
            self.assertIn("scripts/install-deps.sh bench", peers["torch"]["skipped"])
        if numpy_present():  # NumPy is in the default install: its peers must run
            self.assertIn("version", peers["numpy"])

    def test_blas_named(self):
        if "skipped" in self.report["peers"]["numpy"]:
            self.skipTest("SKIPPED: no NumPy")
        blas = self.report["peers"]["blas"]
        self.assertNotEqual(blas["library"], "none loaded")
        self.assertTrue(os.path.exists(blas["path"]), blas)
        line = "  BLAS: " + blas["library"]
        if blas["library"] == "OpenBLAS":
            self.assertRegex(blas["version"], r"^\d+\.\d+")
            self.assertTrue(blas["core"])
            self.assertEqual(blas["threads"], 1)  # the peers' one thread, as OpenBLAS counts it
            line += " %s, kernels for %s, %s, 1 thread" % (blas["version"], blas["core"], blas["threading"])
        self.assertIn(line + " (%s)" % blas["path"], self.result.stdout)
        torch = self.report["peers"]["torch"]
        if "version" in torch:  # PyTorch's own BLAS, named the same way
            self.assertIn("library", torch["blas"])
            self.assertIn("  torch %s (BLAS_INFO=%s: " % (torch["version"], torch["blas_info"]), self.result.stdout)

    def test_ratio_table(self):
        rows = self.report["rows"]
        peers = [name for names in PEER_KERNELS.values() for name in names if any(r["kernel"] == name for r in rows)]
        if not peers:
            self.skipTest("SKIPPED: no peer ran")
        header, lines = table_rows(self.result.stdout, "peer ms / grouped ms")
        self.assertEqual(header.split()[3:], peers)
        self.assertEqual(len(lines), PEER_CASES)
        for line in lines:
            kase, T, S, *cells = line.split()
            grouped = next(r for r in rows if (r["case"], r["T"], r["S"], r["kernel"]) == (kase, int(T), int(S), "grouped"))
            for peer, cell in zip(peers, cells):
                theirs = next(r for r in rows if (r["case"], r["T"], r["S"], r["kernel"]) == (kase, int(T), int(S), peer))
                ratio = theirs["ms"] / grouped["ms"]
                with self.subTest(case=kase, T=T, peer=peer):
                    self.assertEqual(cell, ("%.1fx" if ratio < 10 else "%.0fx") % ratio)


@unittest.skipUnless(numpy_present(), "SKIPPED: /usr/bin/python3 has no NumPy")
class BenchPeersChanged(unittest.TestCase):
    def test_a_wrong_peer_fails_validation_and_is_not_timed(self):
        # numpy_matmul without its 1/sqrt(dh): the scores come out sqrt(dh) times too large.
        result, report = run_with_peers_script("""
            import numpy as np
            library, about, right = peers.PEERS["numpy_matmul"]
            def unscaled(q5, k, v, mask):
                return right(q5 * np.float32(np.sqrt(q5.shape[-1])), k, v, mask)
            peers.PEERS["numpy_matmul"] = (library, about, unscaled)
        """)
        self.assertEqual(result.returncode, 1, result.stderr)
        rows = [r for r in report["rows"] if r["kernel"] == "numpy_matmul"]
        self.assertEqual(len(rows), PEER_CASES)
        for row in rows:
            self.assertFalse(row["validation"]["passed"], row)
            self.assertGreater(row["validation"]["max_error"], row["validation"]["tolerance"])
            self.assertNotIn("ms", row)
            self.assertEqual(row["skipped"], "failed validation: not timed")
        others = [r for r in report["rows"] if "validation" in r and r["kernel"] != "numpy_matmul"]
        self.assertTrue(others)
        self.assertTrue(all(r["validation"]["passed"] for r in others))
        header, lines = table_rows(result.stdout, "milliseconds per call")
        column = header.split().index("numpy_matmul")
        peer_cases = [line.split() for line in lines if line.startswith(("prefill", "decode"))]
        self.assertEqual([cells[column] for cells in peer_cases], ["FAILED"] * PEER_CASES)
        self.assertIn("%d failed" % PEER_CASES, result.stdout)

    def test_without_torch_its_rows_are_skipped_with_the_install_hint(self):
        result, report = run_with_peers_script('sys.modules["torch"] = None  # import torch fails')
        self.assertEqual(result.returncode, 0, result.stderr)
        why = report["peers"]["torch"]["skipped"]
        self.assertTrue(why.startswith("SKIPPED: python3-torch not installed"), why)
        self.assertIn("scripts/install-deps.sh bench", why)
        self.assertIn("  torch " + why, result.stdout)
        self.assertEqual([r for r in report["rows"] if r["kernel"].startswith("torch")], [])
        self.assertEqual(len([r for r in report["rows"] if r["kernel"] == "numpy_matmul"]), PEER_CASES)

    @unittest.skipUnless(os.path.isdir(REFERENCE_BLAS_DIR), "SKIPPED: Debian's libblas3 is not installed")
    def test_the_reference_blas_is_named_with_advice(self):
        env = dict(os.environ, LD_LIBRARY_PATH=REFERENCE_BLAS_DIR)  # NumPy loads libblas3, not OpenBLAS
        result = run_attn("bench", "cpu", "--quick", "--kernels", "grouped", "--json", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        blas = json.loads(result.stdout)["peers"]["blas"]
        self.assertEqual(blas["library"], "reference BLAS (Netlib)")
        self.assertTrue(blas["path"].startswith(REFERENCE_BLAS_DIR), blas)
        self.assertIn("libopenblas0-pthread", blas["advice"])


# PyTorch's documented reference implementation of scaled_dot_product_attention
# (https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html),
# standing in for it: is_causal aligns the mask top-left, and without enable_gqa (before
# 2.5) the key and value heads must match the query heads.
DOCUMENTED_SDPA = """
    import math
    import torch
    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None%s):
        L, S = query.size(-2), key.size(-2)
        scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
        attn_bias = torch.zeros(L, S, dtype=query.dtype)
        if is_causal:
            assert attn_mask is None
            attn_bias.masked_fill_(torch.ones(L, S, dtype=torch.bool).tril(diagonal=0).logical_not(), float("-inf"))
        if attn_mask is not None:
            attn_bias.masked_fill_(attn_mask.logical_not(), float("-inf"))
        if %s:
            key = key.repeat_interleave(query.size(-3) // key.size(-3), -3)
            value = value.repeat_interleave(query.size(-3) // value.size(-3), -3)
        if key.size(-3) != query.size(-3):
            raise RuntimeError("the key heads must match the query heads")
        attn_weight = query @ key.transpose(-2, -1) * scale_factor + attn_bias
        return torch.softmax(attn_weight, dim=-1) @ value
    torch.nn.functional.scaled_dot_product_attention = sdpa
"""


@unittest.skipUnless(numpy_present() and subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                                                        capture_output=True).returncode == 0,
                     "SKIPPED: /usr/bin/python3 has no torch")
class BenchTorchSdpa(unittest.TestCase):
    def check(self, version_body, about):
        result, report = run_with_peers_script(version_body)
        self.assertEqual(result.returncode, 0, result.stderr)
        listed = [k for k in report["peers"]["torch"]["kernels"] if k["name"] == "torch_sdpa"]
        self.assertEqual(listed, [{"name": "torch_sdpa", "about": about}])
        rows = [r for r in report["rows"] if r["kernel"] == "torch_sdpa"]
        self.assertEqual(len(rows), PEER_CASES)
        self.assertTrue(all(r["validation"]["passed"] and r["ms"] > 0 for r in rows), rows)

    def test_sdpa_with_enable_gqa(self):  # PyTorch 2.5 and later
        self.check(DOCUMENTED_SDPA % (", enable_gqa=False", "enable_gqa"),
                   "scaled_dot_product_attention, enable_gqa=True")

    def test_sdpa_before_enable_gqa_repeats_kv(self):  # PyTorch 2.0 to 2.4
        self.check(DOCUMENTED_SDPA % ("", "False"), "repeat_kv, then scaled_dot_product_attention")


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
