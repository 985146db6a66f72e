// The decoder's forward pass. Full prefill, chunked prefill and single-token
// decode are the same call: feed T >= 1 new tokens per sequence; the cache
// supplies the history and its position counter supplies their positions.
#pragma once

#include <vector>

#include "kv_cache.hpp"
#include "weights.hpp"

namespace anatomy {

// How attention reaches a shared KV head.
//   grouped:     query head h reads KV head h / group in place (what the model runs)
//   repeated_kv: K and V are first copied to one head per query head (the reference)
enum class AttentionPath { grouped, repeated_kv };

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
};

template <typename Real>
struct ForwardCapture {
    std::vector<std::int64_t> positions;  // [T] absolute positions of the new tokens
    std::vector<LayerCapture<Real>> layers;
    Tensor3<Real> final_normed;           // [B, T, D]
};

// Run T new tokens per sequence through the model, appending their keys and
// values to `cache` and advancing its position by T.
//   tokens: [B, T]  ->  logits: [B, T, V]
// Throws InputError (leaving the cache untouched) for an id outside the
// vocabulary, an empty token list or a batch size that differs from the cache's.
// When `capture` is given it receives every intermediate of the pass.
template <typename Real>
Tensor3<Real> forward(const Model<Real>& model, KVCache<Real>& cache, const TokenIds& tokens,
                      AttentionPath path = AttentionPath::grouped, ForwardCapture<Real>* capture = nullptr);

// One pass over a whole sequence from an empty cache.   tokens: [B, T]  ->  [B, T, V]
template <typename Real>
Tensor3<Real> full_forward(const Model<Real>& model, const TokenIds& tokens,
                           AttentionPath path = AttentionPath::grouped, ForwardCapture<Real>* capture = nullptr);

}  // namespace anatomy
