// The NumPy and PyTorch peers of `attn bench cpu`, run as a subprocess
// (native/bench/peers.py) with the same shapes, timing policy and thread count.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/attention_bench.hpp"

namespace anatomy::native {

struct PeerSetup {
    std::string python;  // Debian's interpreter, which has python3-numpy and python3-torch
    std::string script;  // peers.py
};

// The default: /usr/bin/python3 and the peers.py of this source tree.
PeerSetup default_peer_setup();

// Runs the peers on the prefill and decode cases of `options`. Never throws for
// a missing Python, NumPy or PyTorch: the report then carries "skipped" reasons.
//   -> {"numpy": {...}, "torch": {...}, "rows": [...]} (see peers.py)
nlohmann::json run_peers(const PeerSetup& setup, const BenchOptions& options);

}  // namespace anatomy::native
