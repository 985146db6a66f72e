// The tables `attn bench cpu` and `attn bench memory` print, and the JSON report file
// every `attn bench` command can write.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace anatomy::native {

// One line per case (prefill T, decode S, recompute S), one column per kernel and
// peer (median ms), then ours-to-peer ratios (peer ms / grouped ms: > 1 means we
// are faster), the cached-decode speed-up and the tiny model's forwards per second.
void print_bench_table(std::ostream& out, const nlohmann::json& report);

// Peak-memory rows of `attn bench memory`.
void print_memory_table(std::ostream& out, const nlohmann::json& report);

// Writes `report` (indented JSON) to `path`; nothing when `path` is empty. Throws
// InputError when the file cannot be written (the commands call it once with an
// empty object before the work, so a bad path fails in a second, not after it).
void write_report_file(const std::string& path, const nlohmann::json& report);

}  // namespace anatomy::native
