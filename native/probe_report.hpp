// The text `attn probe` prints: what was run, the checks, sinks, next tokens and timing.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

namespace anatomy::native {

// Prints the summary of a probe trace (probe_result_to_json, with the command's fields set).
void print_probe_report(std::ostream& out, const nlohmann::json& trace);

}  // namespace anatomy::native
