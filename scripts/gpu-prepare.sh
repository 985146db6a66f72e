#!/usr/bin/env bash
# Run on OUR machine (Debian, with the network) before scripts/gpu-check.sh runs on a
# GPU machine that has CMake, ninja, nvcc and the CUDA 13 runtime, a python3 with
# torch and transformers, but none of our Debian packages and no internet.
#   scripts/gpu-prepare.sh             # prepared build: the six header-only packages into build/gpu-deps/root
#   PREBUILT=1 scripts/gpu-prepare.sh  # prebuilt: also the cuda binaries, portable, into build/cuda
# Env: GPU_DEPS_ROOT (build/gpu-deps/root), BUILD_DIR (build/cuda; the prebuilt step's
# build folder). Last it prints, for both modes, the ignored paths to carry to the
# GPU machine with their sizes (at most 8 paths, 64 MiB in all).
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"
cd "$repo_root" || exit 1
# shellcheck source=scripts/gpu-deps.sh
source scripts/gpu-deps.sh
root=$gpu_deps_root
build_dir=${BUILD_DIR:-build/cuda}

# --- 1. The header-only packages, unpacked (no install, no root needed once the lists exist) ---
if [ -z "$(gpu_deps_missing "$root")" ] && [ "$(cat "$root/.packages" 2>/dev/null)" = "${gpu_deps_packages[*]}" ]; then
  echo "gpu-prepare: $root already holds ${gpu_deps_packages[*]} (delete it to download again)"
else
  debs=$(dirname "$root")/debs
  rm -rf "$root" "$debs"
  mkdir -p "$root" "$debs"
  download() { (cd "$debs" && apt-get download "${gpu_deps_packages[@]}") 2>&1; }
  if ! log=$(download); then
    # Without package lists (a fresh container) apt cannot locate the packages; update
    # them once and retry. Any other failure is reported as it is.
    if grep -qE "Unable to locate package|no installation candidate|Failed to fetch" <<<"$log"; then
      echo "gpu-prepare: apt-get download found no package lists; apt-get update, then once more"
      sudo_cmd=()
      [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
      "${sudo_cmd[@]}" apt-get update -qq || { echo "gpu-prepare: apt-get update failed, so apt-get download failed" >&2; exit 1; }
      log=$(download) || { echo "$log"; echo "gpu-prepare: apt-get download failed" >&2; exit 1; }
    else
      echo "$log"
      echo "gpu-prepare: apt-get download failed" >&2
      exit 1
    fi
  fi
  for deb in "$debs"/*.deb; do
    echo "gpu-prepare: unpack $(basename "$deb")"
    dpkg -x "$deb" "$root"
  done
  rm -rf "$root/usr/share/doc"  # 3 MB of examples and changelogs
  # Every config computes its prefix from its own path except doctest's targets file,
  # which names /usr outright (so on the GPU machine it would point at a /usr/include
  # without doctest): make it relative, lib/cmake/doctest -> ../../.. = usr.
  doctest_targets=$root/usr/lib/cmake/doctest/doctestTargets.cmake
  # shellcheck disable=SC2016  # ${CMAKE_CURRENT_LIST_DIR} is CMake's, written as it is
  sed -i 's|^set(_IMPORT_PREFIX "/usr")$|get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)|' \
    "$doctest_targets"
  if grep -q '^set(_IMPORT_PREFIX "/usr")' "$doctest_targets"; then
    echo "gpu-prepare: could not make $doctest_targets relative" >&2
    exit 1
  fi
  missing=$(gpu_deps_missing "$root")
  if [ -n "$missing" ]; then
    echo "gpu-prepare: $root lacks:"$'\n'"$missing" >&2
    exit 1
  fi
  echo "${gpu_deps_packages[*]}" >"$root/.packages"
  rm -rf "$debs"
  echo "gpu-prepare: $root holds ${gpu_deps_packages[*]}"
fi

# --- 2. (PREBUILT=1) The cuda binaries, built to run on the other machine ---
# Every executable gpu-check runs.
required_targets=(attn gpu_host_tests gpu_kernel_tests)
binary_path() {  # target -> its path in the build folder
  if [ "$1" = attn ]; then echo "$build_dir/native/attn"; else echo "$build_dir/tests/cuda/$1"; fi
}
if [ "${PREBUILT:-0}" = 1 ]; then
  echo "gpu-prepare: cuda preset into $build_dir with ANATOMY_PORTABLE_GPU_BINARIES=ON"
  cmake --preset cuda -B "$build_dir" -DANATOMY_PORTABLE_GPU_BINARIES=ON >/dev/null
  targets=("${required_targets[@]}")
  cmake --build "$build_dir" --target "${targets[@]}"
  # What each binary still needs from the other machine: its NEEDED entries and the
  # newest symbol versions (the top-level CMakeLists.txt says why libstdc++ stays shared).
  bad=0
  for t in "${targets[@]}"; do
    bin=$(binary_path "$t")
    needed=$(objdump -p "$bin" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')
    versions=$(for v in GLIBC GLIBCXX CXXABI; do objdump -T "$bin" | grep -o "${v}_[0-9.]*" | sort -uV | tail -1; done | tr '\n' ' ')
    echo "gpu-prepare: $bin needs ${needed}(newest: $versions)"
    if grep -q libcudart <<<"$needed"; then
      echo "gpu-prepare: $bin links libcudart dynamically: not portable" >&2
      bad=1
    fi
  done
  [ "$bad" = 0 ] || exit 1
fi

# --- 3. What to carry to the GPU machine (the run tool's carry list) ---
size_of() { [ -e "$1" ] && du -sb "$1" | cut -f1 || echo 0; }
print_carry() {  # title, paths...
  local title=$1 total=0 size path
  shift
  echo "  $title:"
  for path in "$@"; do
    size=$(size_of "$path")
    total=$((total + size))
    if [ -e "$path" ]; then
      printf "    %-52s %6.1f MiB\n" "$path" "$(awk "BEGIN {print $size / 1048576}")"
    else
      printf "    %-52s (missing)\n" "$path"
    fi
  done
  printf "    %d paths, %.1f MiB in all (limits: 8 paths, 64 MiB)\n" "$#" "$(awk "BEGIN {print $total / 1048576}")"
  if [ "$#" -gt 8 ] || [ "$total" -gt $((64 * 1048576)) ]; then
    echo "gpu-prepare: the $title carry list is over the limits" >&2
    return 1
  fi
}
prebuilt_paths=()
for t in "${required_targets[@]}"; do prebuilt_paths+=("$(binary_path "$t")"); done
echo
echo "gpu-prepare: carry to the GPU machine"
print_carry "prepared build (then: scripts/gpu-check.sh)" "$root"
then_run="PREBUILT=1 scripts/gpu-check.sh"
[ "$build_dir" = build/cuda ] || then_run="PREBUILT=1 BUILD_DIR=$build_dir scripts/gpu-check.sh"
print_carry "prebuilt (then: $then_run)" "${prebuilt_paths[@]}"
