#!/usr/bin/env bash
# Builds the libFuzzer target over the checkpoint readers with clang (a separate
# CMake project, tests/fuzz/project), writes its seed corpus of valid files, and
# fuzzes for a bounded time. Exit 0: no input crashed, hung or ran out of memory;
# 1: the fuzzer found one (the input is saved as crash-*/timeout-*/oom-* in the
# work folder and printed); 77: no clang or libFuzzer runtime here (ctest skips).
#   usage: tests/fuzz/run_fuzz.sh WORK_DIR [SECONDS]
# Needs Debian's clang-14 and libclang-rt-14-dev.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$1"
seconds="${2:-20}"

cxx="$(command -v clang++-14 || command -v clang++ || true)"
if [ -z "$cxx" ]; then
  echo "fuzz: SKIPPED, no clang++ (apt-get install clang-14 libclang-rt-14-dev)"
  exit 77
fi
probe_dir="$(mktemp -d)"
trap 'rm -rf "$probe_dir"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$probe_dir/t.cpp"
if ! "$cxx" -fsanitize=fuzzer,address "$probe_dir/t.cpp" -o "$probe_dir/t" 2>/dev/null; then
  echo "fuzz: SKIPPED, $cxx cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev)"
  exit 77
fi

mkdir -p "$work"
cmake -S "$here/project" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2

rm -rf "$work/seeds" "$work/corpus"
mkdir -p "$work/seeds" "$work/corpus"
"$work/build/make_seeds" "$work/seeds"
cd "$work"  # where libFuzzer leaves crash-*, timeout-*, oom-* files
# -timeout: seconds one input may take (every reader is linear in its input);
# -rss_limit_mb: a malformed size must not turn into a huge allocation.
"$work/build/fuzz_checkpoint" "$work/corpus" "$work/seeds" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 2>&1 | tail -25
