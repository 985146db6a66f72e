#!/usr/bin/env bash
# Every test: builds the native, sanitizer, wasm and cuda presets and the page,
# then runs the whole ctest suite natively and again under AddressSanitizer + UBSan.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
scripts/install-deps.sh
scripts/build.sh native wasm native-asan
scripts/build-web.sh
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "== build: cuda"
  cmake --preset cuda >/dev/null
  # Every target that holds CUDA code: attn and the tests/cuda executables (the rest is the native build again).
  cmake --build --preset cuda --target attn gpu_mask_tests gpu_decode_plan_tests gpu_fragment_tests gpu_kernel_tests
else
  echo "== build: cuda SKIPPED (no nvcc on this machine)"
fi

if [ -d build/cuda ] && grep -q "ANATOMY_CUDA:BOOL=ON" build/cuda/CMakeCache.txt 2>/dev/null; then
  echo "== tests: cuda (label gpu; without a device they print SKIPPED: no CUDA device)"
  ctest --preset cuda -L '^gpu$' --verbose | grep -E "SKIPPED|Test +#|tests passed|failed out of"
fi

# The browser tests run one at a time, alone (several time the page's responsiveness);
# the rest two at a time, as many of them wait on the processes they start.
echo "== tests: native"
ctest --preset native -LE browser -j 2
echo "== tests: native, the page in Chromium"
ctest --preset native -L browser
echo "== tests: native-asan (AddressSanitizer + UndefinedBehaviorSanitizer)"
# Tests of the page and of the wasm modules run no native code, the fuzzer has its
# own AddressSanitizer build, the large probe is the small one at 400 MB, gpu-prepare
# runs no native code, and the Python solutions reach only judge code that core_unit
# and cli cover (tests/exercises/CMakeLists.txt): once is enough. These run as many
# at a time as there are cores (262 s against 353 one at a time, on 2 cores).
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset native-asan -LE 'browser|wasm-only|fuzz|large|gpu-prepare|python-solutions' -j "$(nproc)"
