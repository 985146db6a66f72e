// The chapters' first screen: a trained head of the page's Shakespeare model drawn
// live from the first-layer slice of its checkpoint (embedding, layer 0's attn_norm,
// q_proj and k_proj: tools/first-layer-slice.mjs cuts them out of model.safetensors
// at build time). A module of its own, attention_first_layer, with no JSON library:
// the page reads the slice's safetensors header and the character vocabulary in
// web/src/lib/first-layer-core.ts and hands over plain arrays, so the module the
// first heatmap waits for stays small. The weights still go through the core's own
// checkpoint boundary (first_layer_from_views: names, shapes, widening, [in, out]).
//
//   firstLayerProbabilities(config, tensors, ids)
//     config:  config.json's fields as an object (Hugging Face names: vocab_size,
//              hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
//              head_dim, intermediate_size, rope_theta, rms_norm_eps), read as
//              config_from_hf_json reads them: the same defaults (KV heads = query
//              heads, head_dim = hidden_size / heads, theta 10000, eps 1e-6) and
//              half-split RoPE pairing
//     tensors: [{name, shape: [..], bytes: Uint8Array (float32, little-endian)}]
//     ids:     [T] token ids, BOS first
//   -> Float32Array [Hq * T * T], layer 0's probabilities, or {error: message}
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "checkpoint/model_from_views.hpp"
#include "model/first_layer_attention.hpp"

namespace anatomy::wasm {
namespace {

using emscripten::val;

int integer_field(const val& config, const char* key) {
    const val value = config[key];
    if (value.isUndefined() || value.isNull()) throw InputError(std::string("config.json: missing field '") + key + "'");
    const double number = value.as<double>();
    if (!value.isNumber() || number != double(int(number)))
        throw InputError(std::string("config.json: field '") + key + "' must be an integer");
    return int(number);
}

double number_field(const val& config, const char* key, double fallback) {
    const val value = config[key];
    if (value.isUndefined() || value.isNull()) return fallback;
    if (!value.isNumber()) throw InputError(std::string("config.json: field '") + key + "' must be a number");
    return value.as<double>();
}

ModelConfig config_from_fields(const val& config) {
    ModelConfig c;
    c.name = "checkpoint";
    c.vocab_size = integer_field(config, "vocab_size");
    c.hidden_size = integer_field(config, "hidden_size");
    c.n_layers = integer_field(config, "num_hidden_layers");
    c.n_heads = integer_field(config, "num_attention_heads");
    const auto given = [&](const char* key) { return !config[key].isUndefined() && !config[key].isNull(); };
    c.n_kv_heads = given("num_key_value_heads") ? integer_field(config, "num_key_value_heads") : c.n_heads;
    c.head_dim = given("head_dim") ? integer_field(config, "head_dim") : (c.n_heads > 0 ? c.hidden_size / c.n_heads : 0);
    c.ffn_size = integer_field(config, "intermediate_size");
    c.rope_theta = number_field(config, "rope_theta", 10000.0);
    c.rms_norm_eps = number_field(config, "rms_norm_eps", 1e-6);
    c.rope_pairing = RopePairing::half_split;
    c.tie_embeddings = true;
    require_valid(c);
    return c;
}

val first_layer_probabilities_js(const val& config_fields, const val& tensors, const val& ids_js) {
    try {
        const ModelConfig config = config_from_fields(config_fields);
        // The views point into `bytes`, which must outlive them.
        std::vector<std::vector<std::uint8_t>> bytes;
        TensorViews views;
        const int count = tensors["length"].as<int>();
        bytes.reserve(std::size_t(count));
        for (int i = 0; i < count; ++i) {
            const val tensor = tensors[i];
            bytes.push_back(emscripten::convertJSArrayToNumberVector<std::uint8_t>(tensor["bytes"]));
            const std::vector<std::size_t> shape = emscripten::convertJSArrayToNumberVector<std::size_t>(tensor["shape"]);
            TensorView view{tensor["name"].as<std::string>(), bytes.back().data(), DType::f32, shape};
            if (view.size_bytes() != bytes.back().size())
                throw InputError("first-layer.safetensors: tensor '" + view.name + "' has " + std::to_string(bytes.back().size()) +
                                 " bytes, its shape needs " + std::to_string(view.size_bytes()));
            views.push_back(std::move(view));
        }
        const FirstLayerAttentionWeights weights = first_layer_from_views(config, views, "first-layer.safetensors");
        const std::vector<std::int32_t> ids = emscripten::convertJSArrayToNumberVector<std::int32_t>(ids_js);
        TokenIds tokens({1, ids.size()});
        std::copy(ids.begin(), ids.end(), tokens.begin());
        const Tensor4<float> probs = first_layer_probabilities(config, weights, tokens);  // [1, Hq, T, T]
        return val::global("Float32Array").new_(val(emscripten::typed_memory_view(probs.size(), probs.data())));
    } catch (const std::exception& e) {
        val error = val::object();
        error.set("error", std::string(e.what()));
        return error;
    }
}

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_first_layer) {
    emscripten::function("firstLayerProbabilities", &anatomy::wasm::first_layer_probabilities_js);
}
