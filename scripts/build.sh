#!/usr/bin/env bash
# Configures and builds the given CMake presets (default: native wasm).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
presets=("$@")
((${#presets[@]})) || presets=(native wasm)
for preset in "${presets[@]}"; do
  echo "== build: $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
done
