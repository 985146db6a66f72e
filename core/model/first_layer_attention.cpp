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

}  // namespace

Tensor4<float> first_layer_probabilities(const ModelConfig& c, const FirstLayerAttentionWeights& w, const TokenIds& tokens) {
    require_valid(c);
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
    const Tensor3<float> h = rms_norm(x, w.attn_norm, c.rms_norm_eps);    // [B, T, D]
    const Tensor4<float> q = split_heads(linear(h, w.wq), c.n_heads);     // [B, Hq, T, dh]
    const Tensor4<float> k = split_heads(linear(h, w.wk), c.n_kv_heads);  // [B, Hkv, T, dh]
    const Tensor4<float> q_rope = apply_rope(q, positions, c.rope_theta, c.rope_pairing);
    const Tensor4<float> k_rope = apply_rope(k, positions, c.rope_theta, c.rope_pairing);
    const Tensor4<float> scores = attention_scores_fast(q_rope, k_rope);  // [B, Hq, T, T]; query head h reads KV head h / group
    return softmax_rows_fast(apply_mask_fast(scores, causal_mask(T, T)));  // [B, Hq, T, T]
}

}  // namespace anatomy
