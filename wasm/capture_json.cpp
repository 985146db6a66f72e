#include "capture_json.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "nested_json.hpp"

namespace anatomy::wasm {

// Everything one layer computed, named as in LayerCapture (probs -> probabilities,
// as in the trace). `wanted` limits the fields: serialising every intermediate of
// a 2 x 32-token batch costs ten times the forward pass itself.
json layer_to_json(const LayerCapture<float>& layer, const std::vector<std::string>& wanted) {
    const std::pair<const char*, json (*)(const LayerCapture<float>&)> fields[] = {
        {"input", [](const LayerCapture<float>& l) { return to_nested_json(l.input); }},                        // [B, T, D]
        {"normed_input", [](const LayerCapture<float>& l) { return to_nested_json(l.normed_input); }},          // [B, T, D]
        {"q", [](const LayerCapture<float>& l) { return to_nested_json(l.q); }},                                // [B, Hq, T, dh] before RoPE
        {"k", [](const LayerCapture<float>& l) { return to_nested_json(l.k); }},                                // [B, Hkv, T, dh]
        {"v", [](const LayerCapture<float>& l) { return to_nested_json(l.v); }},                                // [B, Hkv, T, dh]
        {"q_rope", [](const LayerCapture<float>& l) { return to_nested_json(l.q_rope); }},                      // [B, Hq, T, dh]
        {"k_rope", [](const LayerCapture<float>& l) { return to_nested_json(l.k_rope); }},                      // [B, Hkv, T, dh]
        {"scores", [](const LayerCapture<float>& l) { return to_nested_json(l.scores); }},                      // [B, Hq, T, S]
        {"probabilities", [](const LayerCapture<float>& l) { return to_nested_json(l.probs); }},                // [B, Hq, T, S]
        {"head_outputs", [](const LayerCapture<float>& l) { return to_nested_json(l.head_outputs); }},          // [B, Hq, T, dh]
        {"attention_update", [](const LayerCapture<float>& l) { return to_nested_json(l.attention_update); }},  // [B, T, D]
        {"after_attention", [](const LayerCapture<float>& l) { return to_nested_json(l.after_attention); }},    // [B, T, D]
        {"ffn_output", [](const LayerCapture<float>& l) { return to_nested_json(l.ffn_output); }},              // [B, T, D]
        {"output", [](const LayerCapture<float>& l) { return to_nested_json(l.output); }},                      // [B, T, D]
    };
    json out = json::object();
    for (const auto& [name, field] : fields)
        if (wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end()) out[name] = field(layer);
    return out;
}

// capture: false, true (every field) or a list of field names; anything else is an error.
std::vector<std::string> capture_fields(const json& options, bool& capture) {
    capture = false;
    if (!options.contains("capture")) return {};
    const json& value = options["capture"];
    if (value.is_boolean()) {
        capture = value.get<bool>();
        return {};
    }
    static const char* known[] = {"input", "normed_input", "q", "k", "v", "q_rope", "k_rope", "scores", "probabilities",
                                  "head_outputs", "attention_update", "after_attention", "ffn_output", "output"};
    if (!value.is_array() || value.empty()) throw InputError("capture must be true, false or a list of field names");
    std::vector<std::string> fields;
    for (const json& name : value) {
        if (!name.is_string() || std::find_if(std::begin(known), std::end(known), [&](const char* k) { return name == k; }) == std::end(known))
            throw InputError("capture: unknown field " + name.dump());
        fields.push_back(name.get<std::string>());
    }
    capture = true;
    return fields;
}

json token_labels(const LlamaTokenizer& tokenizer, const std::vector<std::int32_t>& ids) {
    json labels = json::array();
    for (const std::int32_t id : ids) labels.push_back(id == tokenizer.bos_id() ? "BOS" : tokenizer.display(id));
    return labels;
}

}  // namespace anatomy::wasm
