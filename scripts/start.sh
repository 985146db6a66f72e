#!/usr/bin/env bash
# The main job: install what is missing, build the native tool, the wasm core
# and the page, run the full verification, then serve the page on localhost.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root"
scripts/install-deps.sh
scripts/build.sh native wasm
scripts/build-web.sh
echo
build/native/native/attn verify --batch 2 --export-trace build/trace.json
port=${PORT:-8000}
echo
echo "Serving the page at http://127.0.0.1:$port/  (Ctrl-C to stop)"
cd web
exec npx vite preview --host 127.0.0.1 --port "$port" --strictPort
