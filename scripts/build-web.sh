#!/usr/bin/env bash
# Builds the page into web/dist (needs the wasm preset built first).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root/web"
echo "== build: web"
npm run build
