// The parameters of a Llama-style decoder. Projection matrices are stored
// [in, out] so that a projection reads as x @ W, as on paper; Hugging Face
// checkpoints store them [out, in] and are transposed at the checkpoint boundary.
#pragma once

#include <cstdint>
#include <vector>

#include "../tensor.hpp"
#include "model_config.hpp"

namespace anatomy {

template <typename Real>
struct LayerWeights {
    Vector<Real> attn_norm;  // [D]          input_layernorm
    Matrix<Real> wq;         // [D, Hq*dh]   q_proj
    Matrix<Real> wk;         // [D, Hkv*dh]  k_proj
    Matrix<Real> wv;         // [D, Hkv*dh]  v_proj
    Matrix<Real> wo;         // [Hq*dh, D]   o_proj
    Vector<Real> ffn_norm;   // [D]          post_attention_layernorm
    Matrix<Real> w_gate;     // [D, F]       gate_proj
    Matrix<Real> w_up;       // [D, F]       up_proj
    Matrix<Real> w_down;     // [F, D]       down_proj
    Vector<Real> sinks;      // [Hq]         self_attn.sinks: learned sink logits (config.attention_sinks), else empty
};

template <typename Real>
struct ModelWeights {
    Matrix<Real> embedding;  // [V, D]       embed_tokens
    std::vector<LayerWeights<Real>> layers;
    Vector<Real> final_norm;  // [D]         norm
    Matrix<Real> lm_head;     // [D, V]      only when embeddings are not tied; else empty
};

template <typename Real>
struct Model {
    ModelConfig config;
    ModelWeights<Real> weights;
};

// What a tensor is, for code that treats them differently (AdamW decays projections only).
enum class TensorKind { embedding, norm_scale, projection, sink_logits };

// Calls visit(kind, a, b, ...) with the same tensor of each of `weights` (ModelWeights
// of one shape, const or not), for every tensor in the draw order below; sinks and
// lm_head only when the first holds them (a model with attention sinks, an untied model).
template <typename Visit, typename First, typename... Rest>
void for_each_tensor(const Visit& visit, First& first, Rest&... rest) {
    visit(TensorKind::embedding, first.embedding, rest.embedding...);
    for (std::size_t l = 0; l < first.layers.size(); ++l) {
        visit(TensorKind::norm_scale, first.layers[l].attn_norm, rest.layers[l].attn_norm...);
        visit(TensorKind::projection, first.layers[l].wq, rest.layers[l].wq...);
        visit(TensorKind::projection, first.layers[l].wk, rest.layers[l].wk...);
        visit(TensorKind::projection, first.layers[l].wv, rest.layers[l].wv...);
        visit(TensorKind::projection, first.layers[l].wo, rest.layers[l].wo...);
        if (first.layers[l].sinks.size() > 0) visit(TensorKind::sink_logits, first.layers[l].sinks, rest.layers[l].sinks...);
        visit(TensorKind::norm_scale, first.layers[l].ffn_norm, rest.layers[l].ffn_norm...);
        visit(TensorKind::projection, first.layers[l].w_gate, rest.layers[l].w_gate...);
        visit(TensorKind::projection, first.layers[l].w_up, rest.layers[l].w_up...);
        visit(TensorKind::projection, first.layers[l].w_down, rest.layers[l].w_down...);
    }
    visit(TensorKind::norm_scale, first.final_norm, rest.final_norm...);
    if (first.lm_head.size() > 0) visit(TensorKind::projection, first.lm_head, rest.lm_head...);
}

// Default seed of the demo model.
inline constexpr std::uint64_t default_seed = 1;

// Deterministic weights for `config` (see random.hpp for the generator).
// Draw order: embedding; then per layer attn_norm, wq, wk, wv, wo, sinks (only with
// attention sinks), ffn_norm, w_gate, w_up, w_down; then final_norm; then lm_head when
// untied. Each tensor is filled in row-major order of its stored shape, one normal() per element.
//   embedding ~ N(0, 1)
//   a projection W [in, out] ~ N(0, 1/in)    (keeps activations at unit scale)
//   norm scales ~ 1 + N(0, 0.1^2)             (a visible, non-trivial learned scale)
//   sink logits ~ N(0, 1)                     (the scale of a score q.k / sqrt(dh))
// Values are drawn in double and rounded once to float.
Model<float> random_model(const ModelConfig& config, std::uint64_t seed = default_seed);

// Every tensor has the shape `config` asks for; throws InputError naming the first that does not.
template <typename Real>
void require_shapes(const ModelConfig& config, const ModelWeights<Real>& weights);

// The same model in another precision (float -> double for an fp64 reference).
template <typename To, typename From>
Model<To> cast_model(const Model<From>& model);

}  // namespace anatomy
