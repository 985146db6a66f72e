"""attn verify --device cuda and the GPU benchmarks, end to end (label gpu).

Without a device this prints "SKIPPED: no CUDA device" and exits 77, which
ctest reports as skipped. With one: verify passes every GPU check and records
the device in the trace; bench attention --quick and bench decode --quick
validate every kernel, then time it, and their JSON has the fields docs/gpu.md names;
attn probe --device cuda on an exported checkpoint passes every probe check and
matches attn probe --device cpu on the same prompt (logits, every probability,
the next tokens and the continuation).
Run: ATTN=build/cuda/native/attn /usr/bin/python3 tests/cuda/test_gpu_cli.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from test_probe import check_probe_trace  # noqa: E402

ATTN = os.environ.get("ATTN", "build/cuda/native/attn")


def run(*args, timeout=500):
    return subprocess.run([ATTN, *args], capture_output=True, text=True, timeout=timeout)


def max_abs_diff(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        return max((max_abs_diff(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(a - b)


def probe_gpu_against_cpu(folder):
    """The probe on the GPU against the CPU on a 2-layer TinyLlama-shaped checkpoint.
    Both are float32 over the same weights and differ only in summation order: a
    logit moves by ~1e-5 (D = 2048 terms), a probability by less; 1e-3 and 1e-4
    are the probe's own cached-vs-full bound and ten times the observed gap."""
    checkpoint = os.path.join(folder, "tinyllama-2")
    exported = run("export-checkpoint", checkpoint, "--config", "tinyllama-1.1b", "--layers", "2")
    assert exported.returncode == 0, exported.stderr
    traces = {}
    for device in ["cpu", "cuda"]:
        path = os.path.join(folder, "probe-%s.json" % device)
        probe = run("probe", "--model", checkpoint, "--device", device, "--generate", "6", "--output", path)
        assert probe.returncode == 0, (device, probe.stderr)
        with open(path) as f:
            traces[device] = json.load(f)
    cpu, gpu = traces["cpu"], traces["cuda"]
    check_probe_trace(unittest.TestCase(), gpu, 6, device_kind="cuda", cache_dtype="float32")
    for field in ["name", "compute_capability", "total_memory_bytes", "driver_version", "runtime_version"]:
        assert field in gpu["probe"]["device"], field
    assert gpu["tokens"] == cpu["tokens"]
    assert max_abs_diff(gpu["logits"], cpu["logits"]) <= 1e-3, max_abs_diff(gpu["logits"], cpu["logits"])
    for layer_gpu, layer_cpu in zip(gpu["layers"], cpu["layers"]):
        diff = max_abs_diff(layer_gpu["probabilities"], layer_cpu["probabilities"])
        assert diff <= 1e-4, diff
    assert max_abs_diff(gpu["sink_stats"], cpu["sink_stats"]) <= 1e-4
    assert [t["id"] for t in gpu["probe"]["top_next"]] == [t["id"] for t in cpu["probe"]["top_next"]]
    assert gpu["probe"]["continuation"]["ids"] == cpu["probe"]["continuation"]["ids"]
    timing = {d: traces[d]["probe"]["timing"] for d in traces}
    print("probe, 2-layer TinyLlama shapes: prefill tok/s cpu %.0f, cuda %.0f; decode tok/s cpu %.1f, cuda %.1f" % (
        timing["cpu"]["prefill_tokens_per_second"], timing["cuda"]["prefill_tokens_per_second"],
        timing["cpu"]["decode_tokens_per_second"] or 0, timing["cuda"]["decode_tokens_per_second"] or 0))


def main():
    devices = run("devices")
    if "cuda:0" not in devices.stdout:
        # The command itself must refuse in one line with exit 2, not crash.
        refused = run("verify", "--device", "cuda")
        lines = refused.stderr.strip().splitlines()
        assert refused.returncode == 2 and len(lines) == 1 and "no CUDA device" in lines[0], refused
        print("SKIPPED: no CUDA device")
        return 77

    with tempfile.TemporaryDirectory() as folder:
        trace_path = os.path.join(folder, "trace.json")
        verify = run("verify", "--device", "cuda", "--export-trace", trace_path)
        print(verify.stdout)
        assert verify.returncode == 0, verify.stderr
        with open(trace_path) as f:
            trace = json.load(f)
        for field in ["name", "compute_capability", "total_memory_bytes", "driver_version", "runtime_version"]:
            assert field in trace["device"], field
        assert trace["all_checks_passed"]

        attention = run("bench", "attention", "--quick", "--no-peers", "--json")
        assert attention.returncode == 0, attention.stderr
        report = json.loads(attention.stdout)
        assert all(check["passed"] for check in report["checks"])
        assert report["gemm_tflops"] > 0
        for row in report["rows"]:
            assert row["flash_mma"]["tflops"] > 0 and row["flash_mma2"]["tflops"] > 0 and row["eager"]["tflops"] > 0, row

        decode = run("bench", "decode", "--quick", "--json")
        assert decode.returncode == 0, decode.stderr
        report = json.loads(decode.stdout)
        assert report["copy_gbps"] > 0 and all(row["gbps"] > 0 for row in report["rows"])

        probe_gpu_against_cpu(folder)
    print("gpu_cli: verify, both benchmarks and the GPU probe passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
