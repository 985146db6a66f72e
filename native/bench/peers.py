"""Peers for `attn bench cpu`: the same causal GQA attention in NumPy and PyTorch.

Run by `attn bench cpu` as a subprocess with Debian's /usr/bin/python3:
    /usr/bin/python3 native/bench/peers.py SPEC.json
SPEC: {"B", "Hq", "Hkv", "dh", "cases": [{"case", "T", "S"}, ...],
       "warmup", "min_runs", "max_runs", "budget_ms", "seed"}
Prints one JSON object on stdout: {"numpy": {...versions}, "torch": {...} or
{"skipped": why}, "rows": [{"case", "T", "S", "kernel", "ms", "runs_ms",
"validation"} or {..., "skipped": why}]}. Progress goes to stderr.

One thread for everyone: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS
are set to 1 before NumPy or PyTorch load, and torch.set_num_threads(1).

The implementations, written the way a reference usually is:
  numpy_einsum  q as [B, Hkv, group, T, dh]; np.einsum("bgrtd,bgsd->bgrts") / sqrt(dh);
                np.where(mask, scores, -inf); softmax (max, exp, sum); np.einsum back.
  torch_eager   Hugging Face's eager Llama attention: repeat_kv (expand + reshape),
                q @ k^T / sqrt(dh), masked_fill(~mask, -inf), softmax, @ v.
Both materialise [B, Hq, T, S]. Inputs are N(0, 1) float32 from NumPy's generator
(the timing does not depend on the values). Validation: each output against a
float64 NumPy evaluation of the same formula on up to 16 sampled query rows,
max |error| <= 1e-4 (a sanity check that the peer computes attention at all).
"""

import json
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
# A machine may pin OpenBLAS to an older core type or a small L2 (OPENBLAS_CORETYPE,
# OPENBLAS_L2_SIZE), which slows NumPy and PyTorch: the peers run with OpenBLAS's own
# choice, as on a machine without them. Removed before NumPy loads OpenBLAS.
for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(var, None)

PEER_TOLERANCE = 1e-4


def log(*args):
    print("peers:", *args, file=sys.stderr, flush=True)


def time_runs(spec, run):
    for _ in range(spec["warmup"]):
        run()
    runs, cpu = [], []
    start = time.perf_counter()
    while len(runs) < max(spec["max_runs"], 1):
        c0, t0 = time.process_time(), time.perf_counter()
        run()
        runs.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.process_time() - c0) * 1000.0)  # all threads of the process
        if len(runs) >= spec["min_runs"] and (time.perf_counter() - start) * 1000.0 > spec["budget_ms"]:
            break
    return runs, cpu


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def main():
    spec = json.load(open(sys.argv[1]))
    report = {"rows": [], "threads": 1}
    try:
        import numpy as np
    except Exception as e:  # noqa: BLE001 - any import failure means: no peer
        report["numpy"] = {"skipped": "SKIPPED: numpy not importable (%s)" % e}
        report["torch"] = {"skipped": "SKIPPED: numpy not importable, torch peer needs it"}
        print(json.dumps(report))
        return
    report["numpy"] = {"version": np.__version__, "python": sys.executable}
    try:
        import torch

        torch.set_num_threads(1)
        report["torch"] = {"version": torch.__version__, "threads": torch.get_num_threads()}
    except Exception as e:  # noqa: BLE001
        torch = None
        report["torch"] = {"skipped": "SKIPPED: python3-torch not installed (%s)" % e}

    B, Hq, Hkv, dh = spec["B"], spec["Hq"], spec["Hkv"], spec["dh"]
    G = Hq // Hkv
    scale = 1.0 / np.sqrt(dh)

    def numpy_attention(q5, k, v, mask):
        # q5: [B, Hkv, G, T, dh], k, v: [B, Hkv, S, dh], mask: [T, S] bool
        scores = np.einsum("bgrtd,bgsd->bgrts", q5, k) * q5.dtype.type(scale)
        scores = np.where(mask, scores, q5.dtype.type(-np.inf))
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        return np.einsum("bgrts,bgsd->bgrtd", probs, v)  # [B, Hkv, G, T, dh]

    def torch_attention(q, k, v, mask):
        # q: [B, Hq, T, dh], k, v: [B, Hkv, S, dh], mask: [T, S] bool (True = may attend)
        Bq, Hk, S, D = k.shape
        k = k[:, :, None].expand(Bq, Hk, G, S, D).reshape(Bq, Hk * G, S, D)  # HF repeat_kv
        v = v[:, :, None].expand(Bq, Hk, G, S, D).reshape(Bq, Hk * G, S, D)
        scores = torch.matmul(q, k.transpose(2, 3)) / np.sqrt(D)
        scores = scores.masked_fill(~mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
        return torch.matmul(probs, v)  # [B, Hq, T, dh]

    rng = np.random.default_rng(spec.get("seed", 1))
    for case in spec["cases"]:
        T, S = case["T"], case["S"]
        q5 = rng.standard_normal((B, Hkv, G, T, dh), dtype=np.float32)
        k = rng.standard_normal((B, Hkv, S, dh), dtype=np.float32)
        v = rng.standard_normal((B, Hkv, S, dh), dtype=np.float32)
        mask = np.tril(np.ones((T, S), dtype=bool), S - T)  # query t sees keys s <= t + (S - T)
        rows = sorted({i * (T - 1) // 15 for i in range(16)}) if T > 16 else list(range(T))
        exact = np.stack([numpy_attention(q5[:, :, :, t:t + 1].astype(np.float64), k.astype(np.float64),
                                          v.astype(np.float64), mask[t:t + 1])[:, :, :, 0] for t in rows],
                         axis=3)  # [B, Hkv, G, rows, dh]

        def record(kernel, out5, run):
            row = {"case": case["case"], "T": T, "S": S, "kernel": kernel}
            err = float(np.max(np.abs(out5[:, :, :, rows].astype(np.float64) - exact)))
            ok = bool(np.isfinite(err) and err <= PEER_TOLERANCE)
            row["validation"] = {"passed": ok, "max_error": err, "tolerance": PEER_TOLERANCE,
                                 "rows_checked": len(rows)}
            if ok:
                runs, cpu = time_runs(spec, run)
                row["runs_ms"] = runs
                row["ms"] = median(runs)
                row["cpu_ms"] = median(cpu)
            else:
                row["skipped"] = "failed validation: not timed"
            log("%s T=%d S=%d %s: %s" % (case["case"], T, S, kernel,
                                         ("%.3f ms" % row["ms"]) if "ms" in row else row["skipped"]))
            report["rows"].append(row)

        record("numpy_einsum", numpy_attention(q5, k, v, mask), lambda: numpy_attention(q5, k, v, mask))
        if torch is not None:
            qt = torch.from_numpy(q5.reshape(B, Hq, T, dh))
            kt, vt, mt = torch.from_numpy(k), torch.from_numpy(v), torch.from_numpy(mask)
            with torch.no_grad():
                out = torch_attention(qt, kt, vt, mt).numpy().reshape(B, Hkv, G, T, dh)
                record("torch_eager", out, lambda: torch_attention(qt, kt, vt, mt))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
