"""The torch peer of `attn bench attention --device cuda`: scaled_dot_product_attention
on the same shapes, bf16, timed like our kernels (CUDA events, 3 warm-up calls,
L2 flushed before every timed call, median).

Run by native/cuda/gpu_bench.cpp: python3 gpu_peers.py SPEC.json, where SPEC holds
{"cases": [{"B", "H", "Hkv", "T", "D", "causal"}], "runs", "l2_bytes", "device"}.
Prints one JSON object: {"torch_version", "backend_note", "cases": [{..., "ms"}]}
or {"skipped": reason}. Never raises: a missing torch or CUDA is a reason, not a crash.
"""

import json
import sys


def main():
    try:
        import torch
        import torch.nn.functional as F
    except Exception as error:  # noqa: BLE001 - any import failure means: no peer
        print(json.dumps({"skipped": "SKIPPED: import torch failed (%s)" % error}))
        return
    if not torch.cuda.is_available():
        print(json.dumps({"skipped": "SKIPPED: torch %s has no CUDA device" % torch.__version__}))
        return
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    device = torch.device("cuda:%d" % spec.get("device", 0))
    runs = max(5, int(spec.get("runs", 20)))
    flush = torch.empty(int(spec.get("l2_bytes", 1 << 27)), dtype=torch.uint8, device=device)
    cases = []
    for case in spec["cases"]:
        B, H, Hkv, T, D, causal = case["B"], case["H"], case["Hkv"], case["T"], case["D"], case["causal"]
        q = torch.randn(B, H, T, D, device=device, dtype=torch.bfloat16)
        k = torch.randn(B, Hkv, T, D, device=device, dtype=torch.bfloat16)
        v = torch.randn(B, Hkv, T, D, device=device, dtype=torch.bfloat16)
        try:
            def call():
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=(Hkv != H))
            call()
        except TypeError:  # torch < 2.5 has no enable_gqa: repeat K/V once, outside the timing
            k = k.repeat_interleave(H // Hkv, dim=1)
            v = v.repeat_interleave(H // Hkv, dim=1)

            def call():
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        try:
            for _ in range(3):
                call()
            torch.cuda.synchronize(device)
            times = []
            for _ in range(runs):
                flush.zero_()
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                call()
                stop.record()
                stop.synchronize()
                times.append(start.elapsed_time(stop))
            times.sort()
            n = len(times)
            ms = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
            cases.append(dict(case, ms=ms))
        except Exception as error:  # noqa: BLE001 - one failing shape (e.g. memory) is recorded, not fatal
            cases.append(dict(case, ms=None, error=str(error)))
        del q, k, v
        torch.cuda.empty_cache()
    print(json.dumps({"torch_version": torch.__version__, "cuda": torch.version.cuda, "cases": cases}))


if __name__ == "__main__":
    main()
