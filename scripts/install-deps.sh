#!/usr/bin/env bash
# Installs whatever this project needs that the machine lacks: Debian packages
# with apt-get (only when one is missing), then the page's npm packages (npm ci in
# web/, when its lock file is newer than what is installed). Safe to run again; prints
# what it does.
#   scripts/install-deps.sh           both
#   scripts/install-deps.sh debian    the Debian packages only
#   scripts/install-deps.sh npm       the npm packages only
#   scripts/install-deps.sh bench     the Debian packages, the PyTorch peer of `attn bench
#                                     cpu` (python3-torch, docs/perf.md) and the ONNX writer of
#                                     web/bench/webgpu-attention.mjs's peer graphs (python3-onnx)
set -euo pipefail
part="${1:-all}"
case "$part" in
  all | debian | npm | bench) ;;
  *) echo "usage: scripts/install-deps.sh [debian|npm|bench]" >&2; exit 2 ;;
esac

packages=(
  cmake ninja-build g++                 # native build
  ccache                                # compiler cache: the cuda preset recompiles the native core
  libxtensor-dev xtl-dev libxsimd-dev   # arrays
  nlohmann-json3-dev                    # JSON
  doctest-dev                           # unit tests
  libcli11-dev                          # attn's command line
  libssl-dev                            # attn train's SHA-256 of its corpus (OpenSSL's libcrypto)
  emscripten node-acorn                 # wasm build (Emscripten needs Debian's acorn)
  python3-numpy                         # independent NumPy cross-check, the bench's NumPy peer
  libopenblas0-pthread                  # NumPy's BLAS (Debian's libblas3 is the unoptimised reference)
  chromium                              # browser tests (driven by playwright-core; never a downloaded browser)
  clang-14 libclang-rt-14-dev           # libFuzzer over the checkpoint readers (tests/fuzz)
)
# The PyTorch peer of `attn bench cpu`, only with `bench`: python3-torch pulls 167
# packages (579 MiB installed, about 5 minutes on the 2-core build machine), too much
# for every build and test run.
if [ "$part" = bench ]; then
  packages+=(python3-torch python3-onnx)
fi

install_debian() {
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # Node.js may come from outside Debian; only install Debian's when there is none.
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)

  if ((${#missing[@]})); then
    echo "install-deps: installing ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "install-deps: all Debian packages present"
  fi
}

install_npm() {
  # Front-end packages, exactly as locked in web/package-lock.json.
  web="$(cd "$(dirname "$0")/.." && pwd)/web"
  if [ ! -f "$web/node_modules/.package-lock.json" ] || [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
    echo "install-deps: npm ci in web/"
    (cd "$web" && npm ci --no-audit --no-fund)
  else
    echo "install-deps: web/node_modules is up to date"
  fi
}

[ "$part" = npm ] || install_debian
[ "$part" = debian ] || [ "$part" = bench ] || install_npm
