#include "forward.hpp"

#include <numeric>

#include "ops/attention.hpp"
#include "ops/embedding.hpp"
#include "ops/heads.hpp"
#include "ops/linear.hpp"
#include "ops/logits.hpp"
#include "ops/rms_norm.hpp"
#include "ops/rope.hpp"
#include "ops/swiglu.hpp"

namespace anatomy {
namespace {

// One decoder block: x + attention(norm(x)), then + SwiGLU(norm(.)).
//   x: [B, T, D]  ->  [B, T, D]; appends this layer's k, v to the cache tensors.
template <typename Real>
Tensor3<Real> decoder_layer(const ModelConfig& c, const LayerWeights<Real>& w, const Tensor3<Real>& x,
                            const std::vector<std::int64_t>& positions, Tensor4<Real>& k_cache,
                            Tensor4<Real>& v_cache, AttentionPath path, LayerCapture<Real>* capture) {
    // --- attention sublayer ---
    // [anatomy:layer_attn_in]
    const Tensor3<Real> h = rms_norm(x, w.attn_norm, c.rms_norm_eps);   // [B, T, D]
    const Tensor4<Real> q = split_heads(linear(h, w.wq), c.n_heads);     // [B, Hq, T, dh]
    const Tensor4<Real> k = split_heads(linear(h, w.wk), c.n_kv_heads);  // [B, Hkv, T, dh]
    const Tensor4<Real> v = split_heads(linear(h, w.wv), c.n_kv_heads);  // [B, Hkv, T, dh]
    Tensor4<Real> q_rope = apply_rope(q, positions, c.rope_theta, c.rope_pairing);
    Tensor4<Real> k_rope = apply_rope(k, positions, c.rope_theta, c.rope_pairing);
    // [/anatomy:layer_attn_in]

    // [anatomy:layer_cache_append]
    k_cache = append_rows(k_cache, k_rope);  // [B, Hkv, S, dh], S = history + T
    v_cache = append_rows(v_cache, v);       // [B, Hkv, S, dh]
    const std::size_t T = q.shape(2), S = k_cache.shape(2);
    // [/anatomy:layer_cache_append]

    // [anatomy:layer_attention]
    Tensor4<Real> scores, probs, heads;
    if (path == AttentionPath::grouped) {
        scores = attention_scores(q_rope, k_cache);                   // [B, Hq, T, S]
        probs = softmax_rows(apply_mask(scores, causal_mask(T, S)));  // [B, Hq, T, S]
        heads = weighted_values(probs, v_cache);                      // [B, Hq, T, dh]
    } else {
        const Tensor4<Real> k_full = repeat_kv(k_cache, c.kv_group());  // [B, Hq, S, dh]
        const Tensor4<Real> v_full = repeat_kv(v_cache, c.kv_group());  // [B, Hq, S, dh]
        scores = attention_scores(q_rope, k_full);
        probs = softmax_rows(apply_mask(scores, causal_mask(T, S)));
        heads = weighted_values(probs, v_full);
    }
    // [/anatomy:layer_attention]
    // [anatomy:layer_attn_out]
    Tensor3<Real> update = linear(merge_heads(heads), w.wo);  // [B, T, Hq*dh] @ [Hq*dh, D] -> [B, T, D]
    Tensor3<Real> after_attention = residual_add(x, update);  // [B, T, D]
    // [/anatomy:layer_attn_out]

    // --- feed-forward sublayer ---
    // [anatomy:layer_ffn]
    const Tensor3<Real> h2 = rms_norm(after_attention, w.ffn_norm, c.rms_norm_eps);  // [B, T, D]
    Tensor3<Real> ffn = swiglu(h2, w.w_gate, w.w_up, w.w_down);                      // [B, T, D]
    Tensor3<Real> out = residual_add(after_attention, ffn);                          // [B, T, D]
    // [/anatomy:layer_ffn]

    if (capture) {
        *capture = {x,          h,       q,     k,      v,
                    std::move(q_rope), std::move(k_rope), std::move(scores), std::move(probs),
                    std::move(heads),  std::move(update), std::move(after_attention), std::move(ffn), out};
    }
    return out;
}

}  // namespace

template <typename Real>
Tensor3<Real> forward(const Model<Real>& model, KVCache<Real>& cache, const TokenIds& tokens, AttentionPath path,
                      ForwardCapture<Real>* capture) {
    const ModelConfig& c = model.config;
    const std::size_t B = tokens.shape(0), T = tokens.shape(1);
    if (B == 0 || T == 0) throw InputError("forward: at least one token per sequence is required");
    if (cache.keys.size() != std::size_t(c.n_layers)) throw InputError("forward: cache has the wrong number of layers");
    if (cache.batch() != B)
        throw InputError("forward: batch of " + std::to_string(B) + " sequences, but the cache holds " +
                         std::to_string(cache.batch()));

    // [anatomy:forward_inputs]
    // Positions continue from the cache: history, history + 1, ..., history + T - 1.
    std::vector<std::int64_t> positions(T);
    std::iota(positions.begin(), positions.end(), cache.position);

    Tensor3<Real> x = embed(model.weights.embedding, tokens);  // [B, T, D]; validates ids first
    // [/anatomy:forward_inputs]
    if (capture) {
        capture->positions = positions;
        capture->layers.assign(std::size_t(c.n_layers), {});
    }
    // [anatomy:forward_layers]
    for (int l = 0; l < c.n_layers; ++l) {
        x = decoder_layer(c, model.weights.layers[l], x, positions, cache.keys[l], cache.values[l], path,
                          capture ? &capture->layers[l] : nullptr);
    }
    cache.position += std::int64_t(T);
    // [/anatomy:forward_layers]

    // [anatomy:forward_head]
    Tensor3<Real> final_normed = rms_norm(x, model.weights.final_norm, c.rms_norm_eps);  // [B, T, D]
    Tensor3<Real> logits = c.tie_embeddings ? tied_logits(final_normed, model.weights.embedding)  // [B, T, V]
                                            : linear(final_normed, model.weights.lm_head);
    // [/anatomy:forward_head]
    if (capture) capture->final_normed = std::move(final_normed);
    return logits;
}

template <typename Real>
Tensor3<Real> full_forward(const Model<Real>& model, const TokenIds& tokens, AttentionPath path,
                           ForwardCapture<Real>* capture) {
    KVCache<Real> cache = empty_cache<Real>(model.config, tokens.shape(0));
    return forward(model, cache, tokens, path, capture);
}

template Tensor3<float> forward(const Model<float>&, KVCache<float>&, const TokenIds&, AttentionPath, ForwardCapture<float>*);
template Tensor3<double> forward(const Model<double>&, KVCache<double>&, const TokenIds&, AttentionPath, ForwardCapture<double>*);
template Tensor3<float> full_forward(const Model<float>&, const TokenIds&, AttentionPath, ForwardCapture<float>*);
template Tensor3<double> full_forward(const Model<double>&, const TokenIds&, AttentionPath, ForwardCapture<double>*);

}  // namespace anatomy
