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
  cmake --build --preset cuda --target attn   # every CUDA source is part of attn; GPU checks skip without a device
else
  echo "== build: cuda SKIPPED (no nvcc on this machine)"
fi

echo "== tests: native"
ctest --preset native
echo "== tests: native-asan (AddressSanitizer + UndefinedBehaviorSanitizer)"
# Tests of the page and of the wasm judge run no native code: once is enough.
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset native-asan -LE 'browser|wasm-only'
