"""Peers for `attn bench cpu`: the same causal GQA attention in NumPy and PyTorch,
written as their users write it, on the BLAS the process loads.

Run by `attn bench cpu` as a subprocess with Debian's /usr/bin/python3:
    /usr/bin/python3 native/bench/peers.py SPEC.json
SPEC: {"B", "Hq", "Hkv", "dh", "cases": [{"case", "T", "S"}, ...],
       "warmup", "min_runs", "max_runs", "budget_ms", "seed"}
Prints one JSON object on stdout:
  {"threads": 1,
   "blas": {"library", "version", "core", "threading", "threads", "path"}: the BLAS
           whose sgemm NumPy's matmul calls ({"library": "reference BLAS (Netlib)",
           "path", "advice"} for Debian's libblas3),
   "numpy": {"version", "python", "kernels": [{"name", "about"}]} or {"skipped": why},
   "torch": {"version", "threads", "blas_info", "blas" (the BLAS libtorch_cpu's sgemm_
            calls), "kernels": [{"name", "about"} or {"name", "skipped": why}]}
            or {"skipped": why, with how to install it},
   "rows": [{"case", "T", "S", "kernel", "ms", "cpu_ms", "runs_ms", "validation"} or
            {..., "validation", "skipped": "failed validation: not timed"}]}
Progress goes to stderr.

One thread for everyone: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS
are set to 1 before NumPy or PyTorch load, and torch.set_num_threads(1).

The peers (PEERS below), each given q as [B, Hkv, G, T, dh] (query head h = kv * G + g,
the layout of [B, Hq, T, dh]), k, v as [B, Hkv, S, dh] and mask [T, S] (True: may attend):
  numpy_matmul  per KV head, its G query heads as one [G * T, dh] matrix: q @ k^T (one
                BLAS sgemm per KV head, K never copied), * 1/sqrt(dh), + an additive
                mask (0 or -inf), softmax in place (max, exp, sum), @ v.
  numpy_einsum  np.einsum("bgrtd,bgsd->bgrts") / sqrt(dh), np.where(mask, scores, -inf),
                softmax, np.einsum back: NumPy's own loops, no BLAS (no optimize=).
  torch_eager   Hugging Face's eager Llama attention (eager_attention_forward):
                repeat_kv (expand + reshape), q @ k^T * 1/sqrt(dh), + the additive causal
                mask, softmax in float32, @ v.
  torch_sdpa    torch.nn.functional.scaled_dot_product_attention (PyTorch 2.0 and
                later): is_causal=True at prefill, no mask for one query row, the boolean
                mask otherwise (is_causal aligns the mask top-left); enable_gqa=True where
                the version takes it (2.5 and later), otherwise repeat_kv first, as
                Hugging Face's sdpa attention does.
All materialise [B, Hq, T, S] except torch_sdpa, whose kernel PyTorch picks. Masks
are built once outside the timed call, as a model builds them once per forward.
Inputs are N(0, 1) float32 from NumPy's generator (the timing does not depend on the
values). Validation: each output against a float64 NumPy evaluation of the formula on
up to 16 sampled query rows, max |error| <= 1e-4 (a check that the peer computes this
attention at all); a peer that fails is not timed.
"""

import ctypes
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
TORCH_INSTALL = "install it with scripts/install-deps.sh bench (Debian's python3-torch)"
OPENBLAS_INSTALL = "install libopenblas0-pthread (scripts/install-deps.sh debian) for an optimised BLAS"


class Unavailable(Exception):
    """The peer cannot run with this version of its library (the message says why)."""


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


# ---- The BLAS a library calls ----

class DlInfo(ctypes.Structure):  # glibc's Dl_info, for dladdr
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def defining_library(caller, symbol):
    """The file of the library that defines `symbol` as `caller` (a loaded shared
    object) sees it: dlsym on the caller's handle searches the caller and its
    dependencies in the dynamic loader's order, and dladdr names the file. None when
    the caller does not reach the symbol."""
    try:
        function = getattr(ctypes.CDLL(caller), symbol)
    except (OSError, AttributeError):
        return None
    info = DlInfo()
    if not ctypes.CDLL(None).dladdr(ctypes.cast(function, ctypes.c_void_p), ctypes.byref(info)):
        return None
    return os.path.realpath(info.dli_fname.decode())


def describe_blas(caller, symbol):
    """The BLAS whose `symbol` (its single-precision GEMM) `caller` calls: OpenBLAS asked
    through its own functions (version, the core type its kernels were picked for,
    threading, threads), MKL, BLIS or ATLAS by file name, or Debian's reference BLAS."""
    path = defining_library(caller, symbol)
    if path is None:  # a BLAS with renamed symbols (NumPy's own wheels): name its file at least
        loaded = loaded_library("blas") or loaded_library("mkl")
        return {"library": "unknown (%s reaches no %s)" % (os.path.basename(caller), symbol),
                **({"path": os.path.realpath(loaded)} if loaded else {})}
    lib = ctypes.CDLL(path)
    if hasattr(lib, "openblas_get_config"):  # OpenBLAS itself or a libblas.so.3 linked to it
        lib.openblas_get_config.restype = ctypes.c_char_p
        lib.openblas_get_corename.restype = ctypes.c_char_p
        config = lib.openblas_get_config().decode()  # "OpenBLAS 0.3.21 ... SkylakeX MAX_THREADS=64"
        words = config.split()
        return {"library": "OpenBLAS", "version": words[1] if len(words) > 1 else "?",
                "core": lib.openblas_get_corename().decode(),
                "threading": {0: "sequential", 1: "pthreads", 2: "OpenMP"}.get(lib.openblas_get_parallel(), "?"),
                "threads": lib.openblas_get_num_threads(),
                "path": defining_library(path, "openblas_get_config") or path, "config": config}
    name = path.lower()
    for key, library in (("mkl", "MKL"), ("blis", "BLIS"), ("atlas", "ATLAS")):
        if key in name:
            return {"library": library, "path": path}
    if "/blas/" in name:  # Debian's libblas3
        return {"library": "reference BLAS (Netlib)", "path": path, "advice": OPENBLAS_INSTALL}
    return {"library": "unknown", "path": path}


def loaded_library(fragment):
    """The first file mapped into this process whose name contains `fragment`."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fragment in os.path.basename(fields[5]):
                return fields[5]
    return None


# ---- The peers: each takes the case's arrays and returns the call to time ----

def numpy_matmul(q5, k, v, mask):
    import numpy as np

    B, Hkv, G, T, dh = q5.shape
    scale = np.float32(1.0 / np.sqrt(dh))
    bias = np.where(mask, np.float32(0), np.float32(-np.inf))  # [T, S], additive mask
    kT = k.swapaxes(-1, -2)  # [B, Hkv, dh, S], a view: BLAS reads it transposed

    def run():
        scores = (q5.reshape(B, Hkv, G * T, dh) @ kT).reshape(B, Hkv, G, T, -1)  # [B, Hkv, G, T, S]
        scores *= scale
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        return (scores.reshape(B, Hkv, G * T, -1) @ v).reshape(B, Hkv, G, T, dh)

    return run


def numpy_einsum(q5, k, v, mask):
    import numpy as np

    scale = q5.dtype.type(1.0 / np.sqrt(q5.shape[-1]))
    minus_inf = q5.dtype.type(-np.inf)

    def run():
        scores = np.einsum("bgrtd,bgsd->bgrts", q5, k) * scale  # [B, Hkv, G, T, S]
        scores = np.where(mask, scores, minus_inf)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        return np.einsum("bgrts,bgsd->bgrtd", probs, v)  # [B, Hkv, G, T, dh]

    return run


def repeat_kv(torch_tensor, n_rep):
    """Hugging Face's repeat_kv: [B, Hkv, S, dh] -> [B, Hkv * n_rep, S, dh]."""
    B, Hkv, S, dh = torch_tensor.shape
    return torch_tensor[:, :, None].expand(B, Hkv, n_rep, S, dh).reshape(B, Hkv * n_rep, S, dh)


def torch_eager(q5, k, v, mask):
    import torch

    B, Hkv, G, T, dh = q5.shape
    q = torch.from_numpy(q5.reshape(B, Hkv * G, T, dh))  # [B, Hq, T, dh]
    kt, vt = torch.from_numpy(k), torch.from_numpy(v)
    causal_mask = torch.zeros(T, k.shape[2]).masked_fill(~torch.from_numpy(mask), float("-inf"))
    scaling = dh ** -0.5

    def run():
        key_states, value_states = repeat_kv(kt, G), repeat_kv(vt, G)
        attn_weights = torch.matmul(q, key_states.transpose(2, 3)) * scaling
        attn_weights = attn_weights + causal_mask
        attn_weights = torch.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(attn_weights, value_states)  # [B, Hq, T, dh]

    return run


def torch_sdpa(q5, k, v, mask):
    import torch

    F = torch.nn.functional
    if not hasattr(F, "scaled_dot_product_attention"):
        raise Unavailable("torch %s has no scaled_dot_product_attention (PyTorch 2.0 or later)" % torch.__version__)
    B, Hkv, G, T, dh = q5.shape
    S = k.shape[2]
    q = torch.from_numpy(q5.reshape(B, Hkv * G, T, dh))
    kt, vt = torch.from_numpy(k), torch.from_numpy(v)
    masking = {"is_causal": True} if T == S else {} if T == 1 else {"attn_mask": torch.from_numpy(mask)}
    try:  # enable_gqa: PyTorch 2.5 and later
        F.scaled_dot_product_attention(q[:, :, :1], kt[:, :, :1], vt[:, :, :1], enable_gqa=True)

        def run():
            return F.scaled_dot_product_attention(q, kt, vt, enable_gqa=True, **masking)

        run.about = "scaled_dot_product_attention, enable_gqa=True"
    except TypeError:
        def run():
            return F.scaled_dot_product_attention(q, repeat_kv(kt, G), repeat_kv(vt, G), **masking)

        run.about = "repeat_kv, then scaled_dot_product_attention"
    return run


def exact_rows(q5, k, v, mask, rows):
    """The attention of the query rows `rows` in float64: [B, Hkv, G, len(rows), dh]."""
    import numpy as np

    q = q5[:, :, :, rows].astype(np.float64)  # [B, Hkv, G, R, dh]
    scores = q @ k.astype(np.float64)[:, :, None].swapaxes(-1, -2) / np.sqrt(q.shape[-1])  # [B, Hkv, G, R, S]
    scores = np.where(mask[rows], scores, -np.inf)
    probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    return probs @ v.astype(np.float64)[:, :, None]


# name -> (library, what it is, the function that prepares it)
PEERS = {
    "numpy_matmul": ("numpy", "q @ k^T per KV head, BLAS sgemm", numpy_matmul),
    "numpy_einsum": ("numpy", "np.einsum, NumPy's own loops, no BLAS", numpy_einsum),
    "torch_eager": ("torch", "Hugging Face's eager Llama attention", torch_eager),
    "torch_sdpa": ("torch", "scaled_dot_product_attention", torch_sdpa),  # run.about says how
}


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
    report["numpy"] = {"version": np.__version__, "python": sys.executable, "kernels": []}
    try:
        import torch

        torch.set_num_threads(1)
        config = torch.__config__.show()
        blas_info = config.split("BLAS_INFO=")[1].split(",")[0] if "BLAS_INFO=" in config else "?"
        torch_cpu = loaded_library("libtorch_cpu")
        report["torch"] = {"version": torch.__version__, "threads": torch.get_num_threads(), "blas_info": blas_info,
                           "blas": describe_blas(torch_cpu, "sgemm_") if torch_cpu else {"library": "not found"},
                           "kernels": []}
    except Exception as e:  # noqa: BLE001
        torch = None
        report["torch"] = {"skipped": "SKIPPED: python3-torch not installed (%s): %s" % (e, TORCH_INSTALL)}
    report["blas"] = describe_blas(loaded_library("_multiarray_umath"), "cblas_sgemm")  # NumPy's matmul

    B, Hq, Hkv, dh = spec["B"], spec["Hq"], spec["Hkv"], spec["dh"]
    G = Hq // Hkv
    rng = np.random.default_rng(spec.get("seed", 1))
    for case in spec["cases"]:
        T, S = case["T"], case["S"]
        q5 = rng.standard_normal((B, Hkv, G, T, dh), dtype=np.float32)
        k = rng.standard_normal((B, Hkv, S, dh), dtype=np.float32)
        v = rng.standard_normal((B, Hkv, S, dh), dtype=np.float32)
        mask = np.tril(np.ones((T, S), dtype=bool), S - T)  # query t sees keys s <= t + (S - T)
        rows = sorted({i * (T - 1) // 15 for i in range(16)}) if T > 16 else list(range(T))
        exact = exact_rows(q5, k, v, mask, rows)  # [B, Hkv, G, rows, dh]

        for name, (library, about, prepare) in PEERS.items():
            if report[library].get("skipped"):
                continue
            kernels = report[library]["kernels"]
            try:
                run = prepare(q5, k, v, mask)
            except Unavailable as e:
                if not any(kernel["name"] == name for kernel in kernels):
                    kernels.append({"name": name, "skipped": "SKIPPED: %s" % e})
                continue
            if not any(kernel["name"] == name for kernel in kernels):
                kernels.append({"name": name, "about": getattr(run, "about", about)})
            out5 = np.asarray(run()).reshape(B, Hkv, G, T, dh)
            row = {"case": case["case"], "T": T, "S": S, "kernel": name}
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
            log("%s T=%d S=%d %s: %s" % (case["case"], T, S, name,
                                         ("%.3f ms" % row["ms"]) if "ms" in row else row["skipped"]))
            report["rows"].append(row)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
