// The first layer's attention probabilities from the four tensors they depend on.
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
};

// tokens: [B, T]  ->  probabilities: [B, Hq, T, T] (row t: how query t spreads over keys 0..t).
// Throws InputError for weights of other shapes than `config` implies, or an id outside the vocabulary.
Tensor4<float> first_layer_probabilities(const ModelConfig& config, const FirstLayerAttentionWeights& weights,
                                         const TokenIds& tokens);

}  // namespace anatomy
