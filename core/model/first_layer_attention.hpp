// The first layer's attention probabilities from the four tensors they depend on,
// and its whole attention sublayer from six.
// Layer 0 reads nothing but the embedding, so
//
//   ids -> embedding rows -> RMSNorm(attn_norm) -> q = h Wq, k = h Wk -> split heads
//       -> RoPE on q, k -> q.k / sqrt(dh) -> causal mask -> softmax
//
// needs only embedding, attn_norm, wq and wk: about a tenth of the page's Shakespeare
// model, which is what lets the chapters' first screen draw one of its trained heads
// live without loading the rest. Each step is the op decoder_layer calls, in the
// same order, so the probabilities are the full forward's layer-0 probabilities to
// the bit (tests/unit/test_first_layer.cpp holds them to that).
#pragma once

#include "../tensor.hpp"
#include "model_config.hpp"

namespace anatomy {

struct FirstLayerAttentionWeights {
    Matrix<float> embedding;  // [V, D]         embed_tokens
    Vector<float> attn_norm;  // [D]            layers.0.input_layernorm
    Matrix<float> wq;         // [D, Hq*dh]     layers.0.self_attn.q_proj, as [in, out]
    Matrix<float> wk;         // [D, Hkv*dh]    layers.0.self_attn.k_proj, as [in, out]
    // Read by first_layer_attention only; empty where only the probabilities are wanted.
    Matrix<float> wv;         // [D, Hkv*dh]    layers.0.self_attn.v_proj, as [in, out]
    Matrix<float> wo;         // [Hq*dh, D]     layers.0.self_attn.o_proj, as [in, out]
};

// tokens: [B, T]  ->  probabilities: [B, Hq, T, T] (row t: how query t spreads over keys 0..t).
// Throws InputError for weights of other shapes than `config` implies, or an id outside the vocabulary.
Tensor4<float> first_layer_probabilities(const ModelConfig& config, const FirstLayerAttentionWeights& weights,
                                         const TokenIds& tokens);

// The whole attention sublayer of layer 0, from six tensors (the four above, wv and wo):
//
//   probabilities -> each head's mixture of values -> the heads concatenated -> @ wo
//
// Each step is again decoder_layer's own op, so every field is the full forward's
// layer-0 capture to the bit (probs, head_outputs, attention_update).
struct FirstLayerAttention {
    Tensor4<float> probs;         // [B, Hq, T, T]
    Tensor4<float> head_outputs;  // [B, Hq, T, dh]  probs @ v; query head h reads KV head h / (Hq / Hkv)
    Tensor3<float> merged;        // [B, T, Hq*dh]   the heads side by side (concatenated)
    Tensor3<float> update;        // [B, T, D]       merged @ wo: what attention adds to the residual stream
};

// tokens: [B, T] -> layer 0's attention sublayer. Throws InputError as first_layer_probabilities
// does, and for wv or wo of another shape than `config` implies.
FirstLayerAttention first_layer_attention(const ModelConfig& config, const FirstLayerAttentionWeights& weights,
                                          const TokenIds& tokens);

}  // namespace anatomy
