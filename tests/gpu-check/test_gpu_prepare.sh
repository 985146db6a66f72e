#!/usr/bin/env bash
# scripts/gpu-prepare.sh and the configure gpu-check.sh runs on a GPU machine without
# our Debian packages (label gpu-prepare). Runs gpu-prepare.sh (build/gpu-deps/root is
# kept, so only the first run downloads), checks the copy holds each package's header
# and CMake config, then configures the cuda preset into a temporary folder with the
# arguments gpu-check.sh uses and the system's copies hidden: CMake's system prefixes,
# the prefixes derived from PATH and the package registry are all off, so a package
# that resolved to /usr would fail the configure (the build tools are named outright). CMakeCache.txt must then place
# every <name>_DIR inside the copy, and the build's include flags must name the copy's
# usr/include. Configure only, no compile. SKIPPED (77) without nvcc or apt-get download.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=scripts/gpu-deps.sh
source scripts/gpu-deps.sh
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { echo "SKIPPED: no nvcc (set NVCC)"; exit 77; }
command -v apt-get >/dev/null && command -v dpkg >/dev/null || { echo "SKIPPED: no apt-get download here"; exit 77; }

log=$(scripts/gpu-prepare.sh 2>&1)
status=$?
echo "$log"
if [ "$status" != 0 ]; then
  if grep -q "apt-get download failed" <<<"$log"; then
    echo "SKIPPED: apt-get download is unavailable (no network or no package lists)"
    exit 77
  fi
  echo "FAIL: gpu-prepare.sh exited $status"
  exit 1
fi
missing=$(gpu_deps_missing "$gpu_deps_root")
[ -z "$missing" ] || { echo "FAIL: $gpu_deps_root lacks: $missing"; exit 1; }
root=$(cd "$gpu_deps_root" && pwd)
grep -q "^set(_IMPORT_PREFIX \"/usr\")" "$root/usr/lib/cmake/doctest/doctestTargets.cmake" &&
  { echo "FAIL: doctest's targets file still names /usr"; exit 1; }
grep -q "holds" <<<"$log" || { echo "FAIL: gpu-prepare.sh did not say what the folder holds"; exit 1; }
grep -q "build/gpu-deps/root" <<<"$log" || { echo "FAIL: no carry list"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-prepare-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mapfile -t deps_args < <(gpu_deps_cmake_args "$root")
# With the PATH-derived prefixes off, the build tools are named outright.
if ! cmake --preset cuda -B "$tmp/build" -DCMAKE_CUDA_COMPILER="$nvcc" -DANATOMY_CCACHE=OFF \
  -DCMAKE_MAKE_PROGRAM="$(command -v ninja)" -DCMAKE_CXX_COMPILER="$(command -v c++)" \
  -DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF -DCMAKE_FIND_USE_SYSTEM_ENVIRONMENT_PATH=OFF \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
  "${deps_args[@]}" >"$tmp/configure.txt" 2>&1; then
  cat "$tmp/configure.txt"
  echo "FAIL: the cuda preset does not configure against $root alone"
  exit 1
fi
bad=0
for name in "${gpu_deps_cmake_names[@]}"; do
  dir=$(sed -n "s/^${name}_DIR:[A-Z]*=//p" "$tmp/build/CMakeCache.txt")
  case $dir in
    "$root"/*) echo "ok: ${name}_DIR=$dir" ;;
    *) echo "FAIL: ${name}_DIR=$dir is not inside $root"; bad=1 ;;
  esac
done
if grep -q -- "-isystem $root/usr/include" "$tmp/build/build.ninja"; then
  echo "ok: the targets' include flags name $root/usr/include"
else
  echo "FAIL: no -isystem $root/usr/include in build.ninja"; bad=1
fi
[ "$bad" = 0 ] && echo "gpu_prepare: the cuda preset configures against $root alone"
exit $bad
