// The trace: one JSON document with everything the page and a reader of the
// verification need. Its schema is documented in docs/trace-schema.md; bump
// trace_schema_version whenever a field changes meaning or is removed.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "../build_info.hpp"
#include "../model/forward.hpp"
#include "../nested_json.hpp"
#include "checks.hpp"

namespace anatomy {

inline constexpr int trace_schema_version = 1;

// A full forward over `tokens` ([B, T]) plus the given check records.
// `weights` says where the weights came from, e.g. {"source": "seed", "seed": 1}.
nlohmann::json make_trace(const Model<float>& model, const nlohmann::json& weights, const TokenIds& tokens,
                          const std::vector<CheckRecord>& checks, const BuildInfo& build);

}  // namespace anatomy
