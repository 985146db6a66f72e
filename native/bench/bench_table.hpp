// The tables `attn bench cpu` and `attn bench memory` print, and the JSON report file
// every `attn bench` command can write.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "files.hpp"

namespace anatomy::native {

// The machine and its load average, the peers' BLAS and versions; one line per case
// (prefill T, decode S, recompute S), one column per kernel and peer (median ms); then
// one column per peer of peer ms / grouped ms (> 1 means we are faster), the
// cached-decode speed-up and the tiny model's forwards per second.
void print_bench_table(std::ostream& out, const nlohmann::json& report);

// Peak-memory rows of `attn bench memory`.
void print_memory_table(std::ostream& out, const nlohmann::json& report);

// Writes `report` (indented JSON) to `path`; nothing when `path` is empty. Throws
// InputError when the file cannot be written (the commands call it once with an
// empty object before the work, so a bad path fails in a second, not after it).
// The report file --out names (nothing when `path` is empty), made before the work so
// that a bad path fails at once, and written whole with the report (files.hpp).
std::unique_ptr<OutputFile> open_report_file(const std::string& path);
void write_report(std::unique_ptr<OutputFile>& file, const nlohmann::json& report);

}  // namespace anatomy::native
