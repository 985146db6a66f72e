#!/usr/bin/env bash
# Builds the page into web/dist (needs the wasm preset built first), then puts the
# trained model the page's W9 widget runs (llama2.c's stories260K) beside it when
# ../shared/models has it: the files are read from there and copied into the built
# page only, never into the repository. Without them the widget offers "Open a model file".
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$repo_root/web"
echo "== build: web"
npm run build

models=${ANATOMY_MODELS_DIR:-$repo_root/../shared/models}
if [ -f "$models/stories260K/stories260K.bin" ] && [ -f "$models/stories260K/tok512.bin" ]; then
  mkdir -p dist/models/stories260K
  cp "$models/stories260K/stories260K.bin" "$models/stories260K/tok512.bin" dist/models/stories260K/
  echo "build-web: stories260K copied into web/dist/models/ for the trained-model widget"
else
  echo "build-web: no $models/stories260K; the trained-model widget will offer only 'Open a model file'"
fi
