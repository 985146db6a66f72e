#!/usr/bin/env bash
# Every test: builds the native, sanitizer, wasm and cuda presets and the page,
# then runs the whole ctest suite natively and again under AddressSanitizer + UBSan.
# On 2 cores no core should wait: the browser tests that do not time the page run three
# at a time beside the sanitizer and cuda builds, which run at the lowest priority and
# take what the tests leave (about 100 s less than the three one after another).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
scripts/install-deps.sh
scripts/build.sh native wasm
scripts/build-web.sh

echo "== tests: native, the page in Chromium (three at a time, beside the builds below)"
browser_log="$repo_root/build/browser-tests.log"
# In a session of its own, so that a failed build below stops it and its browsers too.
setsid ctest --preset native -L browser -LE alone -j 3 > "$browser_log" 2>&1 &
browser_pid=$!
trap 'kill -- "-$browser_pid" 2>/dev/null || true' EXIT

nice -n 19 scripts/build.sh native-asan
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "== build: cuda"
  cmake --preset cuda >/dev/null
  # Every target that holds CUDA code: attn and the tests/cuda executables (the rest is the native build again).
  nice -n 19 cmake --build --preset cuda --target attn gpu_mask_tests gpu_decode_plan_tests gpu_fragment_tests gpu_kernel_tests
else
  echo "== build: cuda SKIPPED (no nvcc on this machine)"
fi

browser_status=0
wait "$browser_pid" || browser_status=$?
trap - EXIT
echo "== tests: native, the page in Chromium (the results of the run above)"
cat "$browser_log"
if ((browser_status)); then
  echo "the browser tests failed (exit $browser_status); their log: $browser_log"
  exit "$browser_status"
fi

if [ -d build/cuda ] && grep -q "ANATOMY_CUDA:BOOL=ON" build/cuda/CMakeCache.txt 2>/dev/null; then
  echo "== tests: cuda (label gpu; without a device they print SKIPPED: no CUDA device)"
  ctest --preset cuda -L '^gpu$' --verbose | grep -E "SKIPPED|Test +#|tests passed|failed out of"
fi

# Two at a time: many wait on the processes they start.
echo "== tests: native"
ctest --preset native -LE browser -j 2
# The browser tests that time the page's responsiveness, with nothing beside them.
echo "== tests: native, the page in Chromium, timed (one at a time, alone)"
ctest --preset native -L alone
echo "== tests: native-asan (AddressSanitizer + UndefinedBehaviorSanitizer)"
# Tests of the page and of the wasm modules run no native code, the fuzzer has its
# own AddressSanitizer build, the large probe is the small one at 400 MB, gpu-prepare
# runs no native code, and the Python solutions reach only judge code that core_unit
# and cli cover (tests/exercises/CMakeLists.txt): once is enough.
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset native-asan -LE 'browser|wasm-only|fuzz|large|gpu-prepare|python-solutions' -j "$(nproc)"
