# Sourced by the other scripts: settings every build needs.
# Debian's Emscripten 3.1.6 loads acorn from Debian's node-acorn package.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
# Cap parallel jobs: the reference machine has 2 cores and 24 GiB.
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
