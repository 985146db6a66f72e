#!/usr/bin/env bash
# Every test: builds the native, sanitizer, wasm and cuda presets and the page,
# then runs the whole ctest suite natively and again under AddressSanitizer + UBSan.
#
# Every step is CPU-bound, so on 2 cores the run lasts as long as its CPU time when no
# core waits. The native and wasm builds (and the page), which the tests need first, run
# side by side; the sanitizer and cuda builds, which only the last tests need, run beside
# everything else at the lowest priority and take what the others leave (a build's final
# link, a test waiting on its browser). Each background step's output is printed when it
# has finished, and a step that fails stops the run with its exit status.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
scripts/install-deps.sh debian

logs="$repo_root/build/test-logs"
mkdir -p "$logs"
declare -A pids=()
# start NAME NICENESS COMMAND...: runs COMMAND in the background, in a session of its own
# (so that a failure elsewhere stops it and every process it started), into $logs/NAME.log.
# Where the kernel groups each session's processes for scheduling (autogroup), a process's
# niceness counts only within its session; the session's own is set to the same (else a
# build at niceness 19 took a third of the cores from the builds the tests wait for).
start() {
  local name=$1 niceness=$2
  shift 2
  setsid bash -c 'echo "$0" > /proc/self/autogroup 2>/dev/null; exec nice -n "$0" "$@"' "$niceness" "$@" \
    > "$logs/$name.log" 2>&1 &
  pids[$name]=$!
}
# finish NAME: waits for NAME and prints its output; exits with its status if it failed.
finish() {
  local name=$1 status=0
  wait "${pids[$name]}" || status=$?
  unset "pids[$name]"
  cat "$logs/$name.log"
  if ((status)); then
    echo "$name failed (exit $status); its output: $logs/$name.log"
    exit "$status"
  fi
}
stop_all() {
  local pid
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
}
trap stop_all EXIT

# The page's npm packages are installed here, beside the native build, which needs none.
start wasm 0 bash -c 'scripts/install-deps.sh npm && scripts/build.sh wasm && scripts/build-web.sh'
# What the sanitizer run below runs: the unit tests and attn. No other build reads its
# objects, and its compiles took a fifth more CPU time through ccache (which
# preprocesses a source before compiling it) than without.
start native-asan 19 env CCACHE_DISABLE=1 scripts/build.sh native-asan --target attn core_tests
scripts/build.sh native
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  # Every target that holds CUDA code: attn and the tests/cuda executables (the rest is the
  # native build again, which ccache answers now that the native build is done).
  start cuda 19 scripts/build.sh cuda --target attn gpu_host_tests gpu_kernel_tests
else
  echo "== build: cuda SKIPPED (no nvcc on this machine)"
fi
finish wasm

# The page's test files run two at a time in one Chromium (browser_site, group.mjs
# --concurrency 2; tests/browser/CMakeLists.txt): they keep 2 cores busy; one at a time,
# the low-priority builds beside them slowed every page and the whole run took longer.
echo "== tests: native, the page in Chromium (two files at a time)"
ctest --preset native -L browser -LE alone
# Two at a time: many wait on the processes they start.
echo "== tests: native"
ctest --preset native -LE browser -j 2

# The browser tests that time the page's responsiveness, one at a time with no other test
# beside them. The sanitizer and cuda builds go on at the lowest priority, on what the
# page leaves of the cores (their frames and clicks stayed well inside the tests' limits).
echo "== tests: native, the page in Chromium, timed (one at a time, alone)"
ctest --preset native -L alone

if [ -n "${pids[cuda]:-}" ]; then finish cuda; fi
finish native-asan
if [ -d build/cuda ] && grep -q "ANATOMY_CUDA:BOOL=ON" build/cuda/CMakeCache.txt 2>/dev/null; then
  echo "== tests: cuda (label gpu; without a device they print SKIPPED: no CUDA device)"
  ctest --preset cuda -L '^gpu$' --verbose | grep -E "SKIPPED|Test +#|tests passed|failed out of"
fi
echo "== tests: native-asan (AddressSanitizer + UndefinedBehaviorSanitizer)"
# Tests of the page and of the wasm modules run no native code, the comparisons of the
# wasm modules with attn run native commands the command-line tests run here too
# (tests/wasm/CMakeLists.txt), the fuzzer has its own AddressSanitizer build, the large
# probe is the small one at 400 MB, gpu-prepare runs no native code, and the Python
# solutions reach only judge code that core_unit and cli cover
# (tests/exercises/CMakeLists.txt): once is enough.
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset native-asan \
  -LE 'browser|wasm-only|wasm-compare|fuzz|large|gpu-prepare|python-solutions' -j "$(nproc)"
