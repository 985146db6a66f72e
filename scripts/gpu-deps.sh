# shellcheck shell=bash disable=SC2034  # the arrays are read by the scripts that source this
# Sourced by gpu-prepare.sh, gpu-check.sh and tests/gpu-check/test_gpu_prepare.sh:
# where the header-only Debian packages are unpacked for a GPU machine that has none
# of them, and the CMake arguments that point a configure at that copy alone.
#
# The six packages (all header-only) and one header each that proves it is there.
gpu_deps_packages=(libxtensor-dev xtl-dev libxsimd-dev nlohmann-json3-dev doctest-dev libcli11-dev)
gpu_deps_headers=(xtensor/xtensor.hpp xtl/xtl_config.hpp xsimd/xsimd.hpp nlohmann/json.hpp doctest/doctest.h CLI/CLI.hpp)
# The CMake package names, each found through <name>Config.cmake under the copy.
gpu_deps_cmake_names=(xtensor xtl xsimd nlohmann_json doctest CLI11)
# build/gpu-deps/root/usr holds include/ and the CMake configs. It travels with
# the tree (carry build/gpu-deps/root) and is kept between runs, so CI downloads once.
gpu_deps_root=${GPU_DEPS_ROOT:-build/gpu-deps/root}

# gpu_deps_cmake_args ROOT: prints one argument a line. CMAKE_PREFIX_PATH lets each
# package's config find its own dependencies (xtensor's find_dependency(xtl));
# every <name>_DIR is also given outright, because xtensor's and xsimd's configs sit
# in lib/x86_64-linux-gnu/cmake, which find_package searches only when the compiler
# reports that multiarch directory (Debian and Ubuntu do; other distributions do not).
gpu_deps_cmake_args() {
  local root name config
  root=$(cd "$1" && pwd)
  echo "-DCMAKE_PREFIX_PATH=$root/usr"
  for name in "${gpu_deps_cmake_names[@]}"; do
    config=$(find "$root/usr" -name "${name}Config.cmake" -print -quit)
    [ -n "$config" ] && echo "-D${name}_DIR=$(dirname "$config")"
  done
}

# gpu_deps_missing ROOT: prints what the copy lacks (a header or a config), nothing when complete.
gpu_deps_missing() {
  local root=$1 header name
  for header in "${gpu_deps_headers[@]}"; do
    [ -f "$root/usr/include/$header" ] || echo "header $header"
  done
  for name in "${gpu_deps_cmake_names[@]}"; do
    [ -n "$(find "$root/usr" -name "${name}Config.cmake" -print -quit 2>/dev/null)" ] || echo "config ${name}Config.cmake"
  done
}
