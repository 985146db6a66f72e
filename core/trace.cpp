#include "trace.hpp"

#include <xtensor/xview.hpp>

#include "cache_payload.hpp"

namespace anatomy {
namespace {

// Nested arrays from a flat row-major buffer and its shape.
template <typename T, typename Shape>
nlohmann::json nest(const T* data, const Shape& shape, std::size_t axis) {
    nlohmann::json out = nlohmann::json::array();
    std::size_t stride = 1;
    for (std::size_t i = axis + 1; i < shape.size(); ++i) stride *= shape[i];
    for (std::size_t i = 0; i < shape[axis]; ++i) {
        if (axis + 1 == shape.size()) out.push_back(data[i]);
        else out.push_back(nest(data + i * stride, shape, axis + 1));
    }
    return out;
}

}  // namespace

template <typename E>
nlohmann::json to_nested_json(const E& tensor) {
    const auto evaluated = xt::eval(tensor);
    return nest(evaluated.data(), evaluated.shape(), 0);
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
        {"cache_payload", payload_to_json(cache_payload(model.config))},
        {"build", build_info_to_json(build)},
    };
}

template nlohmann::json to_nested_json(const Tensor3<float>&);
template nlohmann::json to_nested_json(const Tensor4<float>&);
template nlohmann::json to_nested_json(const TokenIds&);

}  // namespace anatomy
