#!/usr/bin/env bash
# One run on a GPU machine (H100/H200 class) that has CMake, ninja, nvcc, the CUDA 13
# runtime and a python3 with torch, transformers and numpy, but none of our Debian
# packages and no internet: validate every kernel and the whole model against the CPU
# core, check attn probe against Hugging Face transformers, run both benchmarks, and
# print a summary table last. Exits non-zero when any step failed or timed out.
#
# Two ways, each prepared on our machine first (scripts/gpu-prepare.sh prints what to carry):
#   prepared build   ours: scripts/gpu-prepare.sh              carry: build/gpu-deps/root (5 MiB)
#                    GPU:  scripts/gpu-check.sh                configures and builds the cuda preset there
#   prebuilt         ours: PREBUILT=1 scripts/gpu-prepare.sh   carry: build/cuda/native/attn and the
#                    GPU:  PREBUILT=1 scripts/gpu-check.sh     build/cuda/tests/cuda/gpu_* test binaries
# Environment:
#   GPU_CHECK_OUT=DIR  the report folder (default build/cuda/gpu-check): every log and JSON goes there
#   PREBUILT=1         use the binaries in BUILD_DIR as they are (no configure, no build, no ctest)
#   BUILD_DIR=DIR      the cuda build folder (default build/cuda)
#   PYTHON=python3     the Python for every step (default: python3 on PATH), also given to CMake
#   NVCC=PATH          the CUDA compiler (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   GPU_DEPS_ROOT=DIR  the unpacked header packages (default build/gpu-deps/root); without
#                      them the prepared build uses the system's copies if it has them
#   TESTS=1            also the GPU test binaries (prepared: ctest -L gpu -E gpu_cli; prebuilt:
#                      each binary run directly), which repeat verify's kernel checks: + up to 300 s
#   GPU_CLI=1          also tests/cuda/test_gpu_cli.py (verify, --quick benchmarks, the GPU probe
#                      vs the CPU one): + up to 300 s
#   PROBE22=1          also the 22-layer TinyLlama-shaped probe (4.4 GB checkpoint in SCRATCH): + up to 300 s
#   QUICK=1            the benchmarks' --quick sizes (a smoke test)
#   SCRATCH=DIR        where checkpoints are exported (default: a temporary folder, removed at
#                      the end), kept out of the report folder so that it stays small
#   TIMEOUT_<STEP>=N   one step's limit in seconds (CONFIGURE BUILD DEVICES VERIFY ATTENTION
#                      DECODE HF TESTS GPU_CLI PROBE22)
# Budget: every step has its own timeout (TERM, then KILL 2 s later). The default run's
# limits sum to 330 s: configure 20 + build 135 (prepared only), devices 10, verify 40,
# transformers reference 50, bench attention 55, bench decode 20; with the summary's 10 s
# and the kill grace it ends within 354 s, under 6 minutes. Prebuilt replaces configure
# and build by a load check of a few seconds (each command in it limited to 10-20 s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
repo=$(pwd)
# shellcheck source=scripts/gpu-deps.sh
source scripts/gpu-deps.sh

prebuilt=${PREBUILT:-0}
build_dir=${BUILD_DIR:-build/cuda}
out=${GPU_CHECK_OUT:-build/cuda/gpu-check}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if ! python=$(command -v "${PYTHON:-python3}"); then
  echo "gpu-check: no ${PYTHON:-python3} on PATH (set PYTHON=...)" >&2
  exit 2
fi
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ -n "${SCRATCH:-}" ]; then
  scratch=$SCRATCH
  mkdir -p "$scratch"
else
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
fi

t_configure=${TIMEOUT_CONFIGURE:-20}
t_build=${TIMEOUT_BUILD:-135}
t_devices=${TIMEOUT_DEVICES:-10}
t_verify=${TIMEOUT_VERIFY:-40}
t_attention=${TIMEOUT_ATTENTION:-55}
t_decode=${TIMEOUT_DECODE:-20}
t_hf=${TIMEOUT_HF:-50}
t_tests=${TIMEOUT_TESTS:-300}
t_gpu_cli=${TIMEOUT_GPU_CLI:-300}
t_probe22=${TIMEOUT_PROBE22:-300}

start=$(date +%s)
step_names=()
step_results=()
step_seconds=()
failed=0
banner() { echo; echo "== $1 ($(($(date +%s) - start)) s)"; }
# record NAME STATUS SECONDS: 0 PASS, 77 SKIPPED, 124/137 TIMEOUT (timeout's TERM, then KILL), else FAIL.
record() {
  local word
  case $2 in
    0) word=PASS ;;
    77) word=SKIPPED ;;
    124 | 137) word=TIMEOUT; failed=1 ;;
    skip:*) word="skipped (${2#skip:})" ;;
    *) word="FAIL ($2)"; failed=1 ;;
  esac
  step_names+=("$1")
  step_results+=("$word")
  step_seconds+=("$3")
}
# step NAME TIMEOUT LOG COMMAND...: runs COMMAND under its timeout, output to the screen and LOG.
step() {
  local name=$1 limit=$2 log=$3 began status
  shift 3
  banner "$name (limit $limit s)"
  echo "\$ $*"
  began=$(date +%s)
  timeout -k 2 "$limit" "$@" 2>&1 | tee "$out/$log"
  status=${PIPESTATUS[0]}
  [ "$status" = 124 ] || [ "$status" = 137 ] && echo "TIMEOUT after $limit s: $name"
  record "$name" "$status" $(($(date +%s) - began))
  return "$status"
}
skip_step() { banner "$1"; echo "skipped ($2)"; record "$1" "skip:$2" 0; }

attn=$build_dir/native/attn
targets=(attn gpu_host_tests gpu_kernel_tests)
echo "gpu-check: $([ "$prebuilt" = 1 ] && echo "prebuilt binaries in $build_dir" || echo "prepared build into $build_dir");" \
  "python $python; reports in $out"

# --- 1. The binaries: built here (prepared), or checked that they load (prebuilt) ---
if [ "$prebuilt" = 1 ]; then
  # Each binary's NEEDED libraries; attn must find all of them (ldd) and start. Built
  # with ANATOMY_PORTABLE_GPU_BINARIES the CUDA runtime is linked in; what is left is
  # glibc 2.34, libstdc++ (GLIBCXX_3.4.29), libcublas/libcublasLt .so.13 and the driver.
  load_check() {
    local bin missing dir dirs
    for bin in "$attn" "$build_dir"/tests/cuda/gpu_*_tests; do
      [ -x "$bin" ] || continue
      echo "$bin needs: $(objdump -p "$bin" 2>/dev/null | awk '/NEEDED/ {print $2}' | tr '\n' ' ')"
    done
    [ -x "$attn" ] || { echo "no $attn: run PREBUILT=1 scripts/gpu-prepare.sh on our machine and carry it"; return 1; }
    missing=$(timeout 10 ldd "$attn" | awk '/not found/ {print $1}')
    [ -z "$missing" ] && { starts; return; }
    # cuBLAS may be there only inside torch's wheels (nvidia-cublas): use those.
    echo "not found by the loader: $missing; looking in $python's nvidia packages"
    dirs=$(timeout 20 "$python" -c 'import glob, nvidia
print(" ".join(sorted({d for p in nvidia.__path__ for d in glob.glob(p + "/*/lib")})))' 2>/dev/null)
    for dir in $dirs; do
      LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    done
    export LD_LIBRARY_PATH
    missing=$(timeout 10 ldd "$attn" | awk '/not found/ {print $1}')
    [ -z "$missing" ] || { echo "still not found: $missing"; return 1; }
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    starts
  }
  # A glibc or libstdc++ older than the binary's symbol versions shows here, in the loader's words.
  starts() {
    timeout 10 "$attn" --help >/dev/null && return
    echo "$attn does not start here (glibc $(getconf GNU_LIBC_VERSION 2>/dev/null)): use the prepared build"
    return 1
  }
  banner "binaries load (prebuilt): $attn and $build_dir/tests/cuda/gpu_*_tests"
  began=$(date +%s)
  load_check >"$out/load.txt" 2>&1  # in this shell (its LD_LIBRARY_PATH stays); each command has its own timeout
  status=$?
  cat "$out/load.txt"
  record "binaries load (prebuilt)" "$status" $(($(date +%s) - began))
else
  deps_args=()
  if [ -z "$(gpu_deps_missing "$gpu_deps_root")" ]; then
    mapfile -t deps_args < <(gpu_deps_cmake_args "$gpu_deps_root")
  elif [ -f /usr/include/xtensor/xtensor.hpp ]; then
    echo "gpu-check: no complete $gpu_deps_root; using this machine's header packages"
  else
    echo "gpu-check: $gpu_deps_root is missing or incomplete and the system has no xtensor:" \
      "run scripts/gpu-prepare.sh on our machine and carry $gpu_deps_root" >&2
  fi
  step "configure (cuda preset, sm_90)" "$t_configure" configure.txt \
    cmake --preset cuda -B "$build_dir" -DCMAKE_CUDA_COMPILER="$nvcc" -DANATOMY_PYTHON="$python" "${deps_args[@]}"
  if [ "${step_results[-1]}" = PASS ]; then
    step "build (${#targets[@]} targets)" "$t_build" build.txt cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
  else
    skip_step "build (cuda preset)" "configure failed"
  fi
fi

# --- 2. The device, and the model on it: eager, flash and split-K decode, every kernel vs the core ---
step "attn devices" "$t_devices" devices.txt "$attn" devices
grep -q "cuda:0" "$out/devices.txt" || { echo "attn devices lists no cuda:0"; step_results[-1]="FAIL (no cuda:0)"; failed=1; }

step "attn verify --device cuda" "$t_verify" verify.txt \
  "$attn" verify --device cuda --export-trace "$out/trace.json"

# --- 3. Optional: the test binaries and the CLI test (they repeat verify's checks) ---
if [ "${TESTS:-0}" = 1 ] && [ "$prebuilt" = 1 ]; then
  # Not ctest: the CTest files hold our machine's absolute paths. Each binary directly;
  # one that was not carried is named and skipped, 77 is a skip.
  test_binaries() {
    local bin status worst=0
    for bin in "$@"; do
      if [ ! -x "$bin" ]; then
        echo "-- $(basename "$bin"): not carried (skipped)"
        continue
      fi
      echo "-- $(basename "$bin")"
      "$bin"
      status=$?
      case $status in
        0) echo "-- $(basename "$bin"): PASS" ;;
        77) echo "-- $(basename "$bin"): SKIPPED" ;;
        *) echo "-- $(basename "$bin"): FAIL ($status)"; worst=$status ;;
      esac
    done
    return $worst
  }
  export -f test_binaries
  test_paths=()
  for t in gpu_host_tests gpu_kernel_tests; do test_paths+=("$build_dir/tests/cuda/$t"); done
  step "tests: the GPU test binaries" "$t_tests" tests.txt bash -c 'test_binaries "$@"' test_binaries "${test_paths[@]}"
elif [ "${TESTS:-0}" = 1 ]; then
  step "tests: ctest -L gpu -E gpu_cli" "$t_tests" tests.txt \
    ctest --test-dir "$build_dir" -L gpu -E gpu_cli --output-on-failure
else
  skip_step "tests: the GPU test binaries" "TESTS=1 runs them"
fi
if [ "${GPU_CLI:-0}" = 1 ]; then
  step "tests: test_gpu_cli.py" "$t_gpu_cli" gpu_cli.txt env ATTN="$attn" "$python" tests/cuda/test_gpu_cli.py
else
  skip_step "tests: test_gpu_cli.py" "GPU_CLI=1 runs it"
fi

# --- 4. Hugging Face transformers as the independent reference: attn probe on a 2-layer
# TinyLlama-shaped checkpoint, on the CPU and on the GPU (tests/cuda/hf_reference.py) ---
step "transformers vs attn probe" "$t_hf" hf_reference.txt \
  "$python" tests/cuda/hf_reference.py --attn "$attn" --reference transformers --devices cpu,cuda \
  --work "$out/hf" --checkpoint "$scratch/tinyllama-2"

# --- 5. The benchmarks, at the sizes the summary reads: attention (bf16; eager, the flash
# versions, the cuBLAS ceiling, torch SDPA) and decode (each version's bandwidth vs a copy) ---
# attn finds the torch peer (native/bench/gpu_peers.py) under $ANATOMY_SOURCE_DIR first,
# so a binary built on our machine runs this tree's copy (native/files.hpp: project_file).
export ANATOMY_SOURCE_DIR=$repo
# shellcheck disable=SC2054  # the commas belong to attn's size lists
attention_sizes=(--t 4096,8192 --runs 10)
# shellcheck disable=SC2054
decode_sizes=(--s 4096,16384,65536)
# --d and --hkv are newer than the rest; older binaries time their default heads.
"$attn" bench attention --help 2>/dev/null | grep -q -- "--d " && attention_sizes+=(--d 128)
# shellcheck disable=SC2054
"$attn" bench attention --help 2>/dev/null | grep -q -- "--hkv" && attention_sizes+=(--hkv 4,32)
# shellcheck disable=SC2054
"$attn" bench decode --help 2>/dev/null | grep -q -- "--hkv" && decode_sizes+=(--hkv 4,32)
if [ "${QUICK:-0}" = 1 ]; then
  attention_sizes=(--quick)
  decode_sizes=(--quick)
fi
step "bench attention" "$t_attention" attention.txt \
  "$attn" bench attention --device cuda "${attention_sizes[@]}" --python "$python" --out "$out/attention.json"
step "bench decode" "$t_decode" decode.txt \
  "$attn" bench decode --device cuda "${decode_sizes[@]}" --out "$out/decode.json"

# --- 6. Optional: the probe at TinyLlama's full depth (random bf16 weights), float32 and bfloat16 ---
if [ "${PROBE22:-0}" = 1 ]; then
  probe22() {
    local log
    log=$("$attn" export-checkpoint "$scratch/tinyllama-22" --config tinyllama-1.1b --dtype bfloat16 2>&1) ||
      { echo "$log"; return 1; }
    tail -n 1 <<<"$log"
    for dtype in float32 bfloat16; do
      "$attn" probe --model "$scratch/tinyllama-22" --device cuda --dtype $dtype --generate 32 \
        --output "$out/probe-$dtype.json" >"$out/probe-$dtype.txt" || return
      tail -n 4 "$out/probe-$dtype.txt"
    done
  }
  export attn scratch out
  export -f probe22
  step "probe, 22 layers" "$t_probe22" probe22.txt bash -c probe22
else
  skip_step "probe, 22 layers" "PROBE22=1 runs it"
fi

# --- 7. The summary, last ---
banner "summary"
steps_file=$out/steps.tsv
: >"$steps_file"
for i in "${!step_names[@]}"; do
  printf '%s\t%s\t%s\n' "${step_names[$i]}" "${step_results[$i]}" "${step_seconds[$i]}" >>"$steps_file"
done
timeout 10 "$python" - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception:
        return {}
def find(rows, **want):
    for row in rows:
        if all(row.get(k) == v for k, v in want.items()):
            return row
    return {}
def tflops(entry):
    return "%.1f" % entry["tflops"] if "tflops" in entry else entry.get("skipped", "-")
rows = []
with open(os.path.join(out, "steps.tsv")) as f:
    for line in f:
        name, result, seconds = line.rstrip("\n").split("\t")
        rows.append((name, "%s, %s s" % (result, seconds) if not result.startswith("skipped") else result))
a, d = load("attention.json"), load("decode.json")
if a.get("rows"):
    r = find(a["rows"], Hkv=4, D=128, T=8192, causal=True) or find(a["rows"], Hkv=32, D=128, T=8192, causal=True)
    torch = r.get("torch_sdpa", {})
    for name in ["flash_mma", "flash_mma2"]:  # flash_mma2: a second version, when the binary has it
        if name in r:
            rows.append(("%s bf16 D128 causal T8k TFLOP/s" % name, tflops(r[name])))
    rows.append(("torch SDPA same shape TFLOP/s [backend]", "%s [%s, %s]" % (tflops(torch), torch.get("backend"), torch.get("how"))
                 if torch else a.get("torch", {}).get("skipped", "-")))
    for name in ["flash_mma", "flash_mma2"]:
        if name in r:
            ratio = r[name].get("vs_torch")
            rows.append(("%s / torch (target >= 0.50)" % name, "%.2f" % ratio if ratio is not None else "-"))
    eager = [row["eager"]["tflops"] for row in a["rows"] if row.get("D") == 128 and "tflops" in row.get("eager", {})]
    rows.append(("eager best TFLOP/s at D128 (target >= 100)", "%.1f" % max(eager) if eager else "-"))
    rows.append(("cuBLAS bf16 GEMM ceiling TFLOP/s", "%.0f" % a.get("gemm_tflops", 0)))
if d.get("rows"):
    r = find(d["rows"], Hkv=4, S=16384) or find(d["rows"], S=16384)
    rows.append(("decode S16k GB/s, of copy (target >= 60%)",
                 "%.0f, %.0f%%" % (r["gbps"], 100 * r["of_copy"]) if "gbps" in r else r.get("skipped", "-")))
    group = r.get("decode_group")
    if group is not None:  # the second decode version, when the binary has it
        rows.append(("decode_group S16k GB/s, of copy (target >= 60%)",
                     "%.0f, %.0f%%" % (group["gbps"], 100 * group["of_copy"]) if "gbps" in group
                     else group.get("skipped", "-")))
    rows.append(("device-to-device copy GB/s", "%.0f" % d.get("copy_gbps", 0)))
for dtype in ["float32", "bfloat16"]:
    t = load("probe-%s.json" % dtype).get("probe", {}).get("timing", {})
    if t:
        rows.append(("probe 22 layers %s prefill / decode tok/s" % dtype, "%.0f / %.1f" % (
            t.get("prefill_tokens_per_second") or 0, t.get("decode_tokens_per_second") or 0)))
width = max(len(k) for k, _ in rows)
print("%s  %s" % ("what".ljust(width), "result"))
for k, v in rows:
    print("%s  %s" % (k.ljust(width), v))
try:
    with open(os.path.join(out, "hf_reference.txt")) as f:
        line = next((l.strip() for l in f if " vs attn probe " in l or l.startswith(("SKIPPED", "hf_reference:"))), "")
    if line:
        print(line)
except OSError:
    pass
PY
echo "total $(($(date +%s) - start)) s; reports in $out"
[ "$failed" = 0 ]
