"""attn verify --device cuda and the GPU benchmarks, end to end (label gpu).

Without a device this prints "SKIPPED: no CUDA device" and exits 77, which
ctest reports as skipped. With one: verify passes every GPU check and records
the device in the trace; bench attention --quick and bench decode --quick
validate every kernel, then time it, and their JSON has the fields the README names.
Run: ATTN=build/cuda/native/attn /usr/bin/python3 tests/cuda/test_gpu_cli.py
"""

import json
import os
import subprocess
import sys
import tempfile

ATTN = os.environ.get("ATTN", "build/cuda/native/attn")


def run(*args, timeout=500):
    return subprocess.run([ATTN, *args], capture_output=True, text=True, timeout=timeout)


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
            assert row["flash_mma"]["tflops"] > 0 and row["eager"]["tflops"] > 0, row

        decode = run("bench", "decode", "--quick", "--json")
        assert decode.returncode == 0, decode.stderr
        report = json.loads(decode.stdout)
        assert report["copy_gbps"] > 0 and all(row["gbps"] > 0 for row in report["rows"])
    print("gpu_cli: verify and both benchmarks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
