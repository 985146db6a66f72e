#!/usr/bin/env bash
# Builds the page into web/dist (needs the wasm preset built first), then puts beside
# it, when ../shared has them, the trained model the page's trained-model widget runs (llama2.c's
# stories260K, from ../shared/models) and the text live-training trains on (Tiny Shakespeare's
# first 200,000 characters, cut at a line's end, from ../shared/corpora, gzipped: the
# widget unpacks it with DecompressionStream), and the text the StreamingLLM widget reads
# (20,000 characters from the corpus's held-out last tenth). They are read from there and written
# into the built page only, never into the repository. Without them trained-model offers "Open a
# model file" and live-training trains on pasted text only.
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

corpora=${ANATOMY_CORPORA_DIR:-$repo_root/../shared/corpora}
excerpt_chars=200000
if [ -f "$corpora/tinyshakespeare.txt" ]; then
  mkdir -p dist/corpora
  # Whole lines only (the last, cut one dropped); the corpus is ASCII, so bytes are characters.
  head -c "$excerpt_chars" "$corpora/tinyshakespeare.txt" | sed '$d' | gzip -9n > dist/corpora/shakespeare-excerpt.txt.gz
  echo "build-web: the first $excerpt_chars characters (whole lines) of tinyshakespeare.txt written to web/dist/corpora/ for the training widget"
  # The StreamingLLM widget's text: 20,000 characters from the held-out tenth, which no
  # model the page ships trained on (whole lines, from the first line that starts there).
  # awk reads all its input (an early exit would end tail with SIGPIPE, and pipefail the build).
  tail -c 100000 "$corpora/tinyshakespeare.txt" | awk 'NR > 1 && (n += length($0) + 1) <= 20000' | gzip -9n > dist/corpora/shakespeare-heldout.txt.gz
  echo "build-web: 20000 held-out characters (whole lines) of tinyshakespeare.txt written to web/dist/corpora/ for the StreamingLLM widget"
else
  echo "build-web: no $corpora/tinyshakespeare.txt; the training and StreamingLLM widgets will offer only pasted text"
fi
