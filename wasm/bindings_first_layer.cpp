// The chapters' first screen: a trained head of the page's Shakespeare model drawn
// live from the first-layer slice of its checkpoint (embedding, layer 0's attn_norm,
// q_proj and k_proj: tools/first-layer-slice.mjs cuts them out of model.safetensors
// at build time). A module of its own, attention_first_layer, with neither the JSON
// library nor embind: the page reads the slice's safetensors header and the character
// vocabulary, and web/src/lib/first-layer-call.mjs writes plain numbers and bytes into
// this module's memory, so the module the first heatmap waits for, and its glue, stay
// small. The weights still go through the core's own checkpoint boundary
// (first_layer_from_views: names, shapes, widening, [in, out]).
//
//   first_layer_probabilities(config, names, ranks, dims, data, sizes, count, ids, T)
//     config: 9 doubles, config.json's fields in config_fields' order below, NaN for a
//             field the file lacks; read as config_from_hf_json reads them: the same
//             defaults (KV heads = query heads, head_dim = hidden_size / heads, theta
//             10000, eps 1e-6) and half-split RoPE pairing
//     names:  the `count` tensors' names, each ended by a NUL byte (UTF-8)
//     ranks:  [count] each tensor's rank; dims: their shapes, one after another
//     data, sizes: [count] each tensor's float32 bytes (little-endian) and their length
//     ids:    [T] token ids, BOS first
//   -> layer 0's probabilities [Hq, T, T] (valid until the next call; there are
//      first_layer_size() of them), or null, and then first_layer_error() says why.
//
//   first_layer_attention(the same arguments), where the tensors include layer 0's
//   v_proj and o_proj (the notebook's multi-head figure loads a second slice with them)
//     -> layer 0's whole attention sublayer, one array after another (first_layer_size()
//        floats in all): probabilities [Hq, T, T], head outputs [Hq, T, dh], the heads
//        concatenated [T, Hq*dh], and o_proj's output [T, D]; or null, as above.
#include <emscripten/emscripten.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/model_from_views.hpp"
#include "model/first_layer_attention.hpp"

namespace anatomy::wasm {
namespace {

// config.json's field names, in the order the page passes their values.
constexpr const char* config_fields[] = {"vocab_size",          "hidden_size",         "num_hidden_layers",
                                         "num_attention_heads", "num_key_value_heads", "head_dim",
                                         "intermediate_size",   "rope_theta",          "rms_norm_eps"};
enum Field { vocab, hidden, layers, heads, kv_heads, head_dim, ffn, theta, eps };

bool given(const double* config, Field field) { return !std::isnan(config[field]); }

int integer_field(const double* config, Field field) {
    const double number = config[field];
    if (!given(config, field)) throw InputError(std::string("config.json: missing field '") + config_fields[field] + "'");
    if (number != double(int(number)))
        throw InputError(std::string("config.json: field '") + config_fields[field] + "' must be an integer");
    return int(number);
}

ModelConfig config_from_fields(const double* config) {
    ModelConfig c;
    c.name = "checkpoint";
    c.vocab_size = integer_field(config, vocab);
    c.hidden_size = integer_field(config, hidden);
    c.n_layers = integer_field(config, layers);
    c.n_heads = integer_field(config, heads);
    c.n_kv_heads = given(config, kv_heads) ? integer_field(config, kv_heads) : c.n_heads;
    c.head_dim = given(config, head_dim) ? integer_field(config, head_dim) : (c.n_heads > 0 ? c.hidden_size / c.n_heads : 0);
    c.ffn_size = integer_field(config, ffn);
    c.rope_theta = given(config, theta) ? config[theta] : 10000.0;
    c.rms_norm_eps = given(config, eps) ? config[eps] : 1e-6;
    c.rope_pairing = RopePairing::half_split;
    c.tie_embeddings = true;
    require_valid(c);
    return c;
}

std::vector<float> answer;  // the last answer
std::string error;          // why the last call answered null

// The call's weights, read through the core's checkpoint boundary.
FirstLayerAttentionWeights read_weights(const ModelConfig& config, const char* names, const std::int32_t* ranks,
                                        const std::int32_t* dims, const std::uint8_t* const* data,
                                        const std::int32_t* sizes, std::int32_t count, FirstLayerPart part) {
    TensorViews views;
    for (std::int32_t i = 0; i < count; ++i) {
        const std::string name(names);
        names += name.size() + 1;
        const std::vector<std::size_t> shape(dims, dims + ranks[i]);
        dims += ranks[i];
        TensorView view{name, data[i], DType::f32, shape};
        if (view.size_bytes() != std::size_t(sizes[i]))
            throw InputError("first-layer.safetensors: tensor '" + name + "' has " + std::to_string(sizes[i]) +
                             " bytes, its shape needs " + std::to_string(view.size_bytes()));
        views.push_back(std::move(view));
    }
    return first_layer_from_views(config, views, "first-layer.safetensors", part);
}

TokenIds read_ids(const std::int32_t* ids, std::int32_t T) {
    TokenIds tokens({1, std::size_t(T)});
    std::copy(ids, ids + T, tokens.begin());
    return tokens;
}

// Appends each tensor's values to `answer`, in order.
template <typename... Tensors>
const float* answer_with(const Tensors&... tensors) {
    answer.clear();
    (answer.insert(answer.end(), tensors.begin(), tensors.end()), ...);
    return answer.data();
}

// One call of either export: the config, the weights `part` needs and the ids read from
// the module's memory, then compute(config, weights, tokens); null, with `error` set,
// for anything wrong with them.
template <typename Compute>
const float* call(const double* config_values, const char* names, const std::int32_t* ranks, const std::int32_t* dims,
                  const std::uint8_t* const* data, const std::int32_t* sizes, std::int32_t count, const std::int32_t* ids,
                  std::int32_t T, FirstLayerPart part, const Compute& compute) {
    try {
        const ModelConfig config = config_from_fields(config_values);
        return compute(config, read_weights(config, names, ranks, dims, data, sizes, count, part), read_ids(ids, T));
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

}  // namespace
}  // namespace anatomy::wasm

extern "C" {

EMSCRIPTEN_KEEPALIVE const float* first_layer_probabilities(const double* config_values, const char* names,
                                                            const std::int32_t* ranks, const std::int32_t* dims,
                                                            const std::uint8_t* const* data, const std::int32_t* sizes,
                                                            std::int32_t count, const std::int32_t* ids, std::int32_t T) {
    using namespace anatomy;
    return wasm::call(config_values, names, ranks, dims, data, sizes, count, ids, T, FirstLayerPart::probabilities,
                      [](const ModelConfig& c, const FirstLayerAttentionWeights& w, const TokenIds& tokens) {
                          return wasm::answer_with(anatomy::first_layer_probabilities(c, w, tokens));  // [1, Hq, T, T]
                      });
}

EMSCRIPTEN_KEEPALIVE const float* first_layer_attention(const double* config_values, const char* names,
                                                        const std::int32_t* ranks, const std::int32_t* dims,
                                                        const std::uint8_t* const* data, const std::int32_t* sizes,
                                                        std::int32_t count, const std::int32_t* ids, std::int32_t T) {
    using namespace anatomy;
    return wasm::call(config_values, names, ranks, dims, data, sizes, count, ids, T, FirstLayerPart::attention,
                      [](const ModelConfig& c, const FirstLayerAttentionWeights& w, const TokenIds& tokens) {
                          const FirstLayerAttention block = anatomy::first_layer_attention(c, w, tokens);
                          return wasm::answer_with(block.probs, block.head_outputs, block.merged, block.update);
                      });
}

EMSCRIPTEN_KEEPALIVE std::int32_t first_layer_size() { return std::int32_t(anatomy::wasm::answer.size()); }

EMSCRIPTEN_KEEPALIVE const char* first_layer_error() { return anatomy::wasm::error.c_str(); }

}  // extern "C"
