// The tables `attn bench cpu` and `attn bench memory` print.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

namespace anatomy::native {

// One line per case (prefill T, decode S, recompute S), one column per kernel and
// peer (median ms), then ours-to-peer ratios (peer ms / grouped ms: > 1 means we
// are faster), the cached-decode speed-up and the tiny model's forwards per second.
void print_bench_table(std::ostream& out, const nlohmann::json& report);

// Peak-memory rows of `attn bench memory`.
void print_memory_table(std::ostream& out, const nlohmann::json& report);

}  // namespace anatomy::native
