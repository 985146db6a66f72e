#include "first_layer_attention.hpp"

#include <numeric>
#include <string>
#include <vector>

#include "../ops/attention.hpp"
#include "../ops/attention_kernels.hpp"
#include "../ops/embedding.hpp"
#include "../ops/heads.hpp"
#include "../ops/linear.hpp"
#include "../ops/rms_norm.hpp"
#include "../ops/rope.hpp"

namespace anatomy {
namespace {

template <typename Tensor>
void require_shape(const Tensor& tensor, const std::vector<std::size_t>& expected, const char* name) {
    const std::vector<std::size_t> shape(tensor.shape().begin(), tensor.shape().end());
    if (shape != expected)
        throw InputError(std::string(name) + " has shape " + shape_text(shape) + ", the config implies " + shape_text(expected));
}

// tokens: [B, T] -> (q_rope [B, Hq, T, dh], k_rope [B, Hkv, T, dh], h [B, T, D]), the weights checked first.
struct RotatedQueriesKeys {
    Tensor3<float> h;
    Tensor4<float> q_rope, k_rope;
};

RotatedQueriesKeys rotated_queries_keys(const ModelConfig& c, const FirstLayerAttentionWeights& w, const TokenIds& tokens) {
    require_valid(c);
    if (c.attention_sinks) throw InputError("the first layer alone does not read attention sinks: run the whole model");
    const std::size_t V = std::size_t(c.vocab_size), D = std::size_t(c.hidden_size), dh = std::size_t(c.head_dim);
    require_shape(w.embedding, {V, D}, "embedding");
    require_shape(w.attn_norm, {D}, "attn_norm");
    require_shape(w.wq, {D, std::size_t(c.n_heads) * dh}, "wq");
    require_shape(w.wk, {D, std::size_t(c.n_kv_heads) * dh}, "wk");
    const std::size_t T = tokens.shape(1);
    if (tokens.shape(0) == 0 || T == 0) throw InputError("first_layer_probabilities: at least one token is required");

    std::vector<std::int64_t> positions(T);  // 0, 1, ..., T - 1: no history
    std::iota(positions.begin(), positions.end(), 0);
    const Tensor3<float> x = embed(w.embedding, tokens);                  // [B, T, D]; validates ids first
    Tensor3<float> h = rms_norm(x, w.attn_norm, c.rms_norm_eps);          // [B, T, D]
    const Tensor4<float> q = split_heads(linear(h, w.wq), c.n_heads);     // [B, Hq, T, dh]
    const Tensor4<float> k = split_heads(linear(h, w.wk), c.n_kv_heads);  // [B, Hkv, T, dh]
    return {std::move(h), apply_rope(q, positions, c.rope_theta, c.rope_pairing),
            apply_rope(k, positions, c.rope_theta, c.rope_pairing)};
}

// (q_rope, k_rope) -> probabilities [B, Hq, T, T]; query head h reads KV head h / group.
Tensor4<float> causal_probabilities(const RotatedQueriesKeys& r) {
    const std::size_t T = r.q_rope.shape(2);
    const Tensor4<float> scores = attention_scores_fast(r.q_rope, r.k_rope);  // [B, Hq, T, T]
    return softmax_rows_fast(apply_mask_fast(scores, causal_mask(T, T)));     // [B, Hq, T, T]
}

}  // namespace

Tensor4<float> first_layer_probabilities(const ModelConfig& c, const FirstLayerAttentionWeights& w, const TokenIds& tokens) {
    return causal_probabilities(rotated_queries_keys(c, w, tokens));
}

FirstLayerAttention first_layer_attention(const ModelConfig& c, const FirstLayerAttentionWeights& w, const TokenIds& tokens) {
    const std::size_t D = std::size_t(c.hidden_size), dh = std::size_t(c.head_dim);
    require_shape(w.wv, {D, std::size_t(c.n_kv_heads) * dh}, "wv");
    require_shape(w.wo, {std::size_t(c.n_heads) * dh, D}, "wo");
    const RotatedQueriesKeys r = rotated_queries_keys(c, w, tokens);
    const Tensor4<float> v = split_heads(linear(r.h, w.wv), c.n_kv_heads);  // [B, Hkv, T, dh]
    FirstLayerAttention out;
    out.probs = causal_probabilities(r);                       // [B, Hq, T, T]
    out.head_outputs = weighted_values_fast(out.probs, v);     // [B, Hq, T, dh]
    out.merged = merge_heads(out.head_outputs);                // [B, T, Hq*dh]
    out.update = linear(out.merged, w.wo);                     // [B, T, D]
    return out;
}

}  // namespace anatomy
