#!/usr/bin/env bash
# The main job: install what is missing, build the native tool and the wasm core,
# and run the full verification of the tiny model.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
scripts/install-deps.sh
scripts/build.sh native wasm
echo
build/native/native/attn verify --batch 2 --export-trace build/trace.json
