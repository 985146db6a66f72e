#!/usr/bin/env bash
# One run on a GPU machine (H100/H200 class): build the cuda preset, validate every
# kernel and the whole model against the CPU core, run both benchmarks, and print
# a short summary table last. Budget: under 8 minutes on an H200 (the build about
# 1-2 minutes with 16 cores; verify and kernel checks under a minute; the attention
# benchmark about 4 minutes; decode under a minute), then the pretrained probe on
# the GPU (#6: exporting a 22-layer TinyLlama-shaped checkpoint takes 1-2 minutes
# of CPU time, the probe itself seconds).
#   native/gpu-check.sh            # reports land in build/cuda/gpu-check/
#   QUICK=1 native/gpu-check.sh    # the --quick sizes and a 2-layer probe (a smoke test)
#   PROBE=0 native/gpu-check.sh    # without the probe step
set -uo pipefail
cd "$(dirname "$0")/.."
out=build/cuda/gpu-check
mkdir -p "$out"
jobs=$(nproc)
start=$(date +%s)
step() { echo; echo "== $1 ($(( $(date +%s) - start )) s)"; }

step "build: cuda preset (sm_90 + compute_90 PTX)"
cmake --preset cuda >/dev/null || exit 2
cmake --build --preset cuda -j "$jobs" --target attn gpu_mask_tests gpu_kernel_tests || exit 2
attn=build/cuda/native/attn
$attn devices

step "verify: the model on the GPU (eager, flash, split-K decode) and every kernel vs the core"
$attn verify --device cuda --export-trace "$out/trace.json" | tee "$out/verify.txt"
verify_status=${PIPESTATUS[0]}

step "tests: ctest -L gpu"
ctest --preset cuda -L gpu --output-on-failure | tee "$out/ctest.txt"
ctest_status=${PIPESTATUS[0]}

quick=()
[ "${QUICK:-0}" = 1 ] && quick=(--quick)
step "bench attention (bf16; eager, flash_mma, flash_plain, cuBLAS ceiling, torch SDPA)"
timeout 330 $attn bench attention --device cuda "${quick[@]}" --out "$out/attention.json" | tee "$out/attention.txt"
attention_status=${PIPESTATUS[0]}

step "bench decode (split-K, bandwidth vs device-to-device copy)"
timeout 90 $attn bench decode --device cuda "${quick[@]}" --out "$out/decode.json" | tee "$out/decode.txt"
decode_status=${PIPESTATUS[0]}

step "probe: a 22-layer TinyLlama-shaped checkpoint (random bf16 weights) on the GPU, float32 and bfloat16"
probe_status=0
layers=22
[ "${QUICK:-0}" = 1 ] && layers=2
if [ "${PROBE:-1}" = 0 ]; then
  probe_status=skipped
  echo "skipped (PROBE=0)"
else
  timeout 240 $attn export-checkpoint "$out/tinyllama-$layers" --config tinyllama-1.1b --layers $layers \
    --dtype bfloat16 > "$out/export.txt" || probe_status=$?
  for dtype in float32 bfloat16; do
    [ "$probe_status" = 0 ] || break
    timeout 120 $attn probe --model "$out/tinyllama-$layers" --device cuda --dtype $dtype --generate 32 \
      --output "$out/probe-$dtype.json" > "$out/probe-$dtype.txt" || probe_status=$?
    tail -n 4 "$out/probe-$dtype.txt"
  done
fi

step "summary"
/usr/bin/python3 - "$out" "$verify_status" "$ctest_status" "$attention_status" "$decode_status" "$probe_status" <<'PY'
import json, os, sys
out, verify, ctest, attention, decode = sys.argv[1], *map(int, sys.argv[2:6])
probe = -1 if sys.argv[6] == "skipped" else int(sys.argv[6])
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception:
        return {}
def word(status):
    return "PASS" if status == 0 else "skipped" if status == -1 else ("TIMEOUT" if status == 124 else "FAIL (%d)" % status)
rows = [("attn verify --device cuda", word(verify)), ("ctest -L gpu", word(ctest)),
        ("bench attention (checks + timing)", word(attention)), ("bench decode (checks + timing)", word(decode)),
        ("probe --device cuda (p1-p4, both dtypes)", word(probe))]
a, d = load("attention.json"), load("decode.json")
def find(rows, **want):
    for row in rows:
        if all(row.get(k) == v for k, v in want.items()):
            return row
    return {}
if a.get("rows"):
    r = find(a["rows"], Hkv=4, D=128, T=8192, causal=True) or find(a["rows"], Hkv=32, D=128, T=8192, causal=True)
    mma, torch = r.get("flash_mma", {}), r.get("torch_sdpa", {})
    rows.append(("flash_mma bf16 D128 causal T8k TFLOP/s", "%.1f" % mma["tflops"] if "tflops" in mma else "-"))
    rows.append(("torch SDPA same shape TFLOP/s", "%.1f" % torch["tflops"] if "tflops" in torch else a.get("torch", {}).get("skipped", "-")))
    rows.append(("flash_mma / torch (target >= 0.50)", "%.2f" % mma["vs_torch"] if "vs_torch" in mma else "-"))
    eager = [row["eager"]["tflops"] for row in a["rows"] if row.get("D") == 128 and "tflops" in row.get("eager", {})]
    rows.append(("eager best TFLOP/s at D128 (target >= 100)", "%.1f" % max(eager) if eager else "-"))
    rows.append(("cuBLAS bf16 GEMM ceiling TFLOP/s", "%.0f" % a.get("gemm_tflops", 0)))
if d.get("rows"):
    r = find(d["rows"], Hkv=4, S=16384) or find(d["rows"], S=16384)
    rows.append(("decode S16k GB/s, of copy (target >= 60%)",
                 "%.0f, %.0f%%" % (r["gbps"], 100 * r["of_copy"]) if "gbps" in r else "-"))
    rows.append(("device-to-device copy GB/s", "%.0f" % d.get("copy_gbps", 0)))
for dtype in ["float32", "bfloat16"]:
    t = load("probe-%s.json" % dtype).get("probe", {}).get("timing", {})
    if t:
        rows.append(("probe %s prefill / decode tok/s" % dtype, "%.0f / %.1f" % (
            t.get("prefill_tokens_per_second") or 0, t.get("decode_tokens_per_second") or 0)))
width = max(len(k) for k, _ in rows)
print("%s  %s" % ("what".ljust(width), "result"))
for k, v in rows:
    print("%s  %s" % (k.ljust(width), v))
PY
echo "total $(( $(date +%s) - start )) s; reports in $out"
[ "$verify_status" = 0 ] && [ "$ctest_status" = 0 ] && [ "$attention_status" = 0 ] && [ "$decode_status" = 0 ] &&
  { [ "$probe_status" = 0 ] || [ "$probe_status" = skipped ]; }
