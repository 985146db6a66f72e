#!/usr/bin/env bash
# Configures and builds the given CMake presets (default: native wasm), or only the given
# targets of one preset:
#   scripts/build.sh [PRESET...]
#   scripts/build.sh PRESET --target TARGET...
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
presets=()
while (($#)) && [ "$1" != --target ]; do
  presets+=("$1")
  shift
done
targets=("$@")  # empty, or --target and its names
((${#presets[@]})) || presets=(native wasm)
if ((${#targets[@]})) && { ((${#presets[@]} != 1)) || ((${#targets[@]} < 2)); }; then
  echo "usage: scripts/build.sh [PRESET...]  or  scripts/build.sh PRESET --target TARGET..." >&2
  exit 2
fi
for preset in "${presets[@]}"; do
  echo "== build: $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" "${targets[@]}"
done
