#!/usr/bin/env bash
# Every test: builds the native, sanitizer and wasm presets, then runs the
# whole ctest suite natively and again under AddressSanitizer + UBSan.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
scripts/install-deps.sh
scripts/build.sh native wasm native-asan

echo "== tests: native"
ctest --preset native
echo "== tests: native-asan (AddressSanitizer + UndefinedBehaviorSanitizer)"
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset native-asan
