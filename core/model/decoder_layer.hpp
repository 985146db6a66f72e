// The decoder block, written once for every CPU model: the tiny model's
// [in, out] float or double matrices (core/model/forward.cpp) and a checkpoint's
// [out, in] views in f32, f16 or bf16 used in place (core/pretrained). What
// differs between them is only how a projection reads its weight (`project`
// below, one overload per weight type) and how the KV cache stores its rows
// (a cache layer: append this step's rows, then read every row).
//
//   x -> RMSNorm -> q, k, v projections -> split heads -> RoPE on q, k
//     -> append k, v to the cache -> grouped-query attention over the cache
//     -> merge heads -> o projection -> + x
//     -> RMSNorm -> SwiGLU -> + residual
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../ops/attention.hpp"
#include "../ops/attention_kernels.hpp"
#include "../ops/heads.hpp"
#include "../ops/linear.hpp"
#include "../ops/rms_norm.hpp"
#include "../ops/rope.hpp"
#include "../ops/swiglu.hpp"
#include "../parallel.hpp"
#include "../tensor.hpp"
#include "model_config.hpp"

namespace anatomy {

// How attention reaches a shared KV head.
//   grouped:     query head h reads KV head h / group in place (what the model runs)
//   repeated_kv: K and V are first copied to one head per query head (the reference)
enum class AttentionPath { grouped, repeated_kv };

// Attention computed outside the decoder block, by a backend whose attention runs on
// another device (core/verify/device_attention_backend.hpp): the block hands over the
// queries after RoPE and the cache's keys and values, causal over the cache, with the
// layer's sink logits when the model has them, and takes back the probabilities and
// the heads' outputs.
//   q: [B, Hq, T, dh], k, v: [B, Hkv, S, dh], sinks: [Hq] or null
//   -> probs [B, Hq, T, S] (empty where the device writes none), heads [B, Hq, T, dh]
template <typename Real>
struct AttentionResult {
    Tensor4<Real> probs, heads;
};
template <typename Real>
using ExternalAttention =
    std::function<AttentionResult<Real>(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& v,
                                        const Vector<Real>* sinks)>;

// Everything one decoder layer computed for the T new tokens (S = history + T).
template <typename Real>
struct LayerCapture {
    Tensor3<Real> input;               // [B, T, D]        residual stream entering the layer
    Tensor3<Real> normed_input;        // [B, T, D]        RMSNorm(input) * attn_norm
    Tensor4<Real> q, k, v;             // [B, Hq|Hkv, T, dh] projections before RoPE
    Tensor4<Real> q_rope, k_rope;      // [B, Hq|Hkv, T, dh] after RoPE
    Tensor4<Real> scores;              // [B, Hq, T, S]    q.k / sqrt(dh), before the mask
    Tensor4<Real> probs;               // [B, Hq, T, S]    softmax of the masked scores
    Tensor4<Real> head_outputs;        // [B, Hq, T, dh]   probs @ v per head
    Tensor3<Real> attention_update;    // [B, T, D]        merged heads @ wo
    Tensor3<Real> after_attention;     // [B, T, D]        input + attention_update
    Tensor3<Real> ffn_output;          // [B, T, D]        SwiGLU(RMSNorm(after_attention))
    Tensor3<Real> output;              // [B, T, D]        after_attention + ffn_output
    // The shape of every tensor the layer computed, in the order computed, read from
    // the tensors themselves (the probe reports layer 0's).
    std::vector<std::pair<std::string, std::vector<std::size_t>>> shapes;
};

// A projection with an [in, out] matrix:  x: [B, T, in], w: [in, out]  ->  [B, T, out].
// (The pretrained model's [out, in] WeightView has its own project, in
// pretrained/weight_view.hpp: the same call finds it where pretrained_forward.cpp
// instantiates this file, by argument-dependent lookup, so the model folder
// includes nothing from pretrained/.)
template <typename Real>
Tensor3<Real> project(const Tensor3<Real>& x, const Matrix<Real>& w, const ParallelFor&) {
    return linear(x, w);
}

// One decoder block: x + attention(norm(x)), then + SwiGLU(norm(.)).
//   x: [B, T, D]  ->  [B, T, D]; appends this layer's k (after RoPE) and v to `cache`.
// Weights: LayerWeights<Real> ([in, out] matrices) or PretrainedLayer ([out, in] views);
// `parallel` splits a view projection's rows (ignored for matrices).
// CacheLayer: append(k_rope, v) with [B, Hkv, T, dh] each, then keys() and values(),
// every cached row as [B, Hkv, S, dh]. `external`, when given, computes the attention
// in place of `path`.
template <typename Real, typename Weights, typename CacheLayer>
Tensor3<Real> decoder_layer(const ModelConfig& c, const Weights& w, const ParallelFor& parallel,
                            const Tensor3<Real>& x, const std::vector<std::int64_t>& positions, CacheLayer& cache,
                            AttentionPath path, LayerCapture<Real>* capture,
                            const ExternalAttention<Real>* external = nullptr) {
    const auto note = [&](const char* name, const auto& tensor) {
        if (capture) capture->shapes.push_back({name, {tensor.shape().begin(), tensor.shape().end()}});
    };
    // --- attention sublayer ---
    // [anatomy:layer_attn_in]
    const Tensor3<Real> h = rms_norm(x, w.attn_norm, c.rms_norm_eps);  // [B, T, D]
    const Tensor3<Real> q_flat = project(h, w.wq, parallel);            // [B, T, Hq*dh]
    const Tensor3<Real> k_flat = project(h, w.wk, parallel);            // [B, T, Hkv*dh]
    const Tensor3<Real> v_flat = project(h, w.wv, parallel);            // [B, T, Hkv*dh]
    const Tensor4<Real> q = split_heads(q_flat, c.n_heads);             // [B, Hq, T, dh]
    const Tensor4<Real> k = split_heads(k_flat, c.n_kv_heads);          // [B, Hkv, T, dh]
    const Tensor4<Real> v = split_heads(v_flat, c.n_kv_heads);          // [B, Hkv, T, dh]
    Tensor4<Real> q_rope = apply_rope(q, positions, c.rope_theta, c.rope_pairing);
    Tensor4<Real> k_rope = apply_rope(k, positions, c.rope_theta, c.rope_pairing);
    // [/anatomy:layer_attn_in]
    note("attn_norm", h), note("q_proj", q_flat), note("k_proj", k_flat), note("v_proj", v_flat);
    note("q_heads", q), note("k_heads", k), note("v_heads", v);

    // [anatomy:layer_cache_append]
    cache.append(k_rope, v);                            // S = history + T rows now
    const Tensor4<Real>& k_cache = cache.keys();        // [B, Hkv, S, dh]
    const Tensor4<Real>& v_cache = cache.values();      // [B, Hkv, S, dh]
    const std::size_t T = q.shape(2), S = k_cache.shape(2);
    // [/anatomy:layer_cache_append]
    note("k_cache_layer", k_cache), note("v_cache_layer", v_cache);

    // [anatomy:layer_attention]
    // With attention sinks (c.attention_sinks), each row's softmax has the head's sink
    // logit as one more column with no value: the row sums to one minus the sink's share.
    const auto softmax = [&](const Tensor4<Real>& masked) {
        return c.attention_sinks ? softmax_rows_with_sinks_fast(masked, w.sinks) : softmax_rows_fast(masked);
    };
    Tensor4<Real> scores, probs, heads;
    if (external) {
        AttentionResult<Real> done = (*external)(q_rope, k_cache, v_cache, c.attention_sinks ? &w.sinks : nullptr);
        probs = std::move(done.probs);                                  // [B, Hq, T, S]
        heads = std::move(done.heads);                                  // [B, Hq, T, dh]
    } else if (path == AttentionPath::grouped) {
        scores = attention_scores_fast(q_rope, k_cache);                // [B, Hq, T, S]
        probs = softmax(apply_mask_fast(scores, causal_mask(T, S)));    // [B, Hq, T, S]
        heads = weighted_values_fast(probs, v_cache);                   // [B, Hq, T, dh]
    } else {
        const Tensor4<Real> k_full = repeat_kv(k_cache, c.kv_group());  // [B, Hq, S, dh]
        const Tensor4<Real> v_full = repeat_kv(v_cache, c.kv_group());  // [B, Hq, S, dh]
        scores = attention_scores_fast(q_rope, k_full);
        probs = softmax(apply_mask_fast(scores, causal_mask(T, S)));
        heads = weighted_values_fast(probs, v_full);
    }
    // [/anatomy:layer_attention]
    note("scores", scores), note("probabilities", probs), note("head_outputs", heads);
    // [anatomy:layer_attn_out]
    const Tensor3<Real> merged = merge_heads(heads);            // [B, T, Hq*dh]
    Tensor3<Real> update = project(merged, w.wo, parallel);     // [B, T, Hq*dh] @ wo -> [B, T, D]
    Tensor3<Real> after_attention = residual_add(x, update);    // [B, T, D]
    // [/anatomy:layer_attn_out]
    note("merged_heads", merged), note("o_proj", update);

    // --- feed-forward sublayer: SwiGLU, (silu(h2 @ w_gate) * (h2 @ w_up)) @ w_down ---
    // [anatomy:layer_ffn]
    const Tensor3<Real> h2 = rms_norm(after_attention, w.ffn_norm, c.rms_norm_eps);  // [B, T, D]
    const Tensor3<Real> gate = project(h2, w.w_gate, parallel);                      // [B, T, F]
    const Tensor3<Real> up = project(h2, w.w_up, parallel);                          // [B, T, F]
    Tensor3<Real> ffn = project(swiglu_hidden(gate, up), w.w_down, parallel);        // [B, T, D]
    Tensor3<Real> out = residual_add(after_attention, ffn);                          // [B, T, D]
    // [/anatomy:layer_ffn]
    note("gate_proj", gate), note("up_proj", up), note("down_proj", ffn), note("block_output", out);

    if (capture) {
        capture->input = x, capture->normed_input = h, capture->q = q, capture->k = k, capture->v = v;
        capture->q_rope = std::move(q_rope), capture->k_rope = std::move(k_rope);
        capture->scores = std::move(scores), capture->probs = std::move(probs);
        capture->head_outputs = std::move(heads), capture->attention_update = std::move(update);
        capture->after_attention = std::move(after_attention), capture->ffn_output = std::move(ffn);
        capture->output = out;
    }
    return out;
}

}  // namespace anatomy
