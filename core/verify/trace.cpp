#include "trace.hpp"

#include <xtensor/xview.hpp>

#include "../model/cache_payload.hpp"
#include "check_suite.hpp"

namespace anatomy {

nlohmann::json non_finite_json(const std::optional<NonFinite>& found) {
    if (!found) return nullptr;
    return {{"tensor", found->tensor}, {"index", found->index}, {"value", non_finite_text(found->value)},
            {"count_in_tensor", found->count}, {"text", describe(*found)}};
}

nlohmann::json make_trace(const Model<float>& model, const nlohmann::json& weights, const TokenIds& tokens,
                          const std::vector<CheckRecord>& checks, const BuildInfo& build) {
    ForwardCapture<float> capture;
    const Tensor3<float> logits = full_forward(model, tokens, AttentionPath::grouped, &capture);  // [B, T, V]

    nlohmann::json layers = nlohmann::json::array();
    for (const LayerCapture<float>& layer : capture.layers) {
        // probabilities: [B, Hq, T, S]; here S = T (no history before the prompt).
        layers.push_back({{"probabilities", to_nested_json(layer.probs)}});
    }
    nlohmann::json check_list = nlohmann::json::array();
    for (const CheckRecord& c : checks) check_list.push_back(check_to_json(c));

    return {
        {"schema_version", trace_schema_version},
        {"kind", "attention-anatomy-trace"},
        {"config", config_to_json(model.config)},
        {"weights", weights},
        {"tokens", to_nested_json(tokens)},
        {"positions", capture.positions},
        {"layers", layers},
        {"logits", to_nested_json(logits)},
        {"checks", check_list},
        {"all_checks_passed", all_passed(checks)},
        {"non_finite", non_finite_json(first_non_finite(capture.layers, logits))},
        {"cache_payload", payload_to_json(cache_payload(model.config))},
        {"build", build_info_to_json(build)},
    };
}

}  // namespace anatomy
