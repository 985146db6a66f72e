"""The torch peer of `attn bench attention --device cuda`: scaled_dot_product_attention
on the same shapes, bf16, random inputs, timed like our kernels (CUDA events, 3
warm-up calls, L2 flushed by a read before every timed call, median), with the
backend SDPA dispatched to recorded for each case.

Run by native/cuda/gpu_bench.cpp: python3 gpu_peers.py SPEC.json, where SPEC holds
{"cases": [{"B", "H", "Hkv", "T", "D", "causal"}], "runs", "l2_bytes", "device"}.
Prints one JSON object: {"torch_version", "cuda", "cases": [{..., "ms", "backend", "how",
"variants": [{"how", "backend", "kernels", "ms"}]}]}
or {"skipped": reason}. Never raises: a missing torch or CUDA is a reason, not a crash.
"""

import json
import sys


# The SDPA backend that ran, named from the CUDA kernels a profiled call launched
# (the dispatcher picks one silently, and GQA or a shape can send it to the slow
# math path): flash, efficient (memory-efficient / CUTLASS fmha), cudnn or math.
def backend_of(call, torch):
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if "Memcpy" not in e.key and "Memset" not in e.key})
    except Exception as error:  # noqa: BLE001 - the profiler is optional: say so
        return {"backend": "unknown", "why": str(error)}
    joined = " ".join(names).lower()
    if "cudnn" in joined:
        backend = "cudnn"
    elif "flash" in joined:
        backend = "flash"
    elif "fmha" in joined or "efficient" in joined or "cutlass" in joined:
        backend = "efficient"
    else:
        backend = "math"
    return {"backend": backend, "kernels": [n for n in names if "attention" in n.lower() or "fmha" in n.lower() or
                                            "flash" in n.lower() or "cudnn" in n.lower()][:4]}


def median_ms(call, flush, runs, torch, device):
    for _ in range(3):
        call()
    torch.cuda.synchronize(device)
    times = []
    for _ in range(runs):
        flush.sum()  # a read evicts the L2 cache without leaving dirty lines (as our benchmark does)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    n = len(times)
    return times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])


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
    flush = torch.randint(0, 255, (int(spec.get("l2_bytes", 1 << 27)) // 4,), dtype=torch.int32, device=device)
    cases = []
    for case in spec["cases"]:
        B, H, Hkv, T, D, causal = case["B"], case["H"], case["Hkv"], case["T"], case["D"], case["causal"]
        q = torch.randn(B, H, T, D, device=device, dtype=torch.bfloat16)
        k = torch.randn(B, Hkv, T, D, device=device, dtype=torch.bfloat16)
        v = torch.randn(B, Hkv, T, D, device=device, dtype=torch.bfloat16)
        # Ways to hand SDPA grouped K/V: natively (torch >= 2.5, enable_gqa), and with K/V
        # repeated to H heads outside the timing. The faster is the peer; both are recorded.
        ways = []
        if Hkv != H:
            ways.append(("enable_gqa", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)))
            k_rep, v_rep = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
            ways.append(("repeat_kv", lambda: F.scaled_dot_product_attention(q, k_rep, v_rep, is_causal=causal)))
        else:
            ways.append(("plain", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)))
        variants = []
        for how, call in ways:
            try:
                call()
                variant = {"how": how, **backend_of(call, torch)}
                variant["ms"] = median_ms(call, flush, runs, torch, device)
            except Exception as error:  # noqa: BLE001 - one failing way (old torch, memory) is recorded, not fatal
                variant = {"how": how, "ms": None, "error": str(error).splitlines()[0][:200]}
            variants.append(variant)
        timed = [w for w in variants if w.get("ms") is not None]
        best = min(timed, key=lambda w: w["ms"]) if timed else None
        cases.append(dict(case, ms=best["ms"] if best else None, backend=best["backend"] if best else None,
                          how=best["how"] if best else None, variants=variants))
        del q, k, v
        torch.cuda.empty_cache()
    print(json.dumps({"torch_version": torch.__version__, "cuda": torch.version.cuda, "cases": cases}))


if __name__ == "__main__":
    main()
