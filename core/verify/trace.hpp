// The trace: one JSON document with everything the page and a reader of the
// verification need. Its schema is documented in docs/trace-schema.md; bump
// trace_schema_version whenever a field changes meaning or is removed.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "../build_info.hpp"
#include "../model/forward.hpp"
#include "../nested_json.hpp"
#include "../non_finite.hpp"
#include "checks.hpp"

namespace anatomy {

inline constexpr int trace_schema_version = 1;

// The trace's "non_finite": the first value of its pass that is not finite, as
// {tensor, index, value ("nan", "inf", "-inf"), count_in_tensor, text}, or null.
nlohmann::json non_finite_json(const std::optional<NonFinite>& found);

// A full forward over `tokens` ([B, T]) plus the given check records.
// `weights` says where the weights came from, e.g. {"source": "seed", "seed": 1}.
nlohmann::json make_trace(const Model<float>& model, const nlohmann::json& weights, const TokenIds& tokens,
                          const std::vector<CheckRecord>& checks, const BuildInfo& build);

}  // namespace anatomy
