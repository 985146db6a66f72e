// A source's tensor views bound to a ModelConfig: every tensor llama_tensor_specs
// lists, found once with exactly its stored shape. This is the one check every
// loader goes through (verify's widening, the probe's in-place model), so both
// accept and refuse the same files with the same messages.
#pragma once

#include <string>
#include <vector>

#include "../model/model_config.hpp"
#include "tensor_views.hpp"

namespace anatomy {

// The views of one decoder, stored [out, in] in the source's precision.
struct LlamaLayerViews {
    TensorView attn_norm;  // [D]          input_layernorm
    TensorView wq;         // [Hq*dh, D]   q_proj
    TensorView wk;         // [Hkv*dh, D]  k_proj
    TensorView wv;         // [Hkv*dh, D]  v_proj
    TensorView wo;         // [D, Hq*dh]   o_proj
    TensorView ffn_norm;   // [D]          post_attention_layernorm
    TensorView w_gate;     // [F, D]       gate_proj
    TensorView w_up;       // [F, D]       up_proj
    TensorView w_down;     // [D, F]       down_proj
    TensorView sinks;      // [Hq]         self_attn.sinks (only with attention sinks; else no shape)
};

struct LlamaViews {
    ModelConfig config;
    TensorView embedding;                 // [V, D]  embed_tokens
    std::vector<LlamaLayerViews> layers;
    TensorView final_norm;                // [D]     norm
    TensorView lm_head;                   // [V, D]  only when untied (no bytes when tied)
};

// One layer's weights built from its views, whatever the loader holds them as:
// `norm` turns a norm scale's view into the layer's vector type, `projection` a
// projection's view into its matrix type (widened and transposed, or used in place).
template <typename Layer, typename Norm, typename Projection>
Layer layer_from_views(const LlamaLayerViews& v, const Norm& norm, const Projection& projection) {
    Layer l;
    l.attn_norm = norm(v.attn_norm);
    l.wq = projection(v.wq);
    l.wk = projection(v.wk);
    l.wv = projection(v.wv);
    l.wo = projection(v.wo);
    l.ffn_norm = norm(v.ffn_norm);
    l.w_gate = projection(v.w_gate);
    l.w_up = projection(v.w_up);
    l.w_down = projection(v.w_down);
    if (!v.sinks.shape.empty()) l.sinks = norm(v.sinks);  // a vector, as a norm scale is
    return l;
}

// The one tensor of `tensors` named `name`, of exactly `shape`. Throws InputError,
// prefixed with `source`, when it is held twice ("appears in more than one shard"),
// missing, or of another shape ("has shape [a, b], config implies [c, d]").
const TensorView& required_tensor(const TensorViews& tensors, const std::string& name, const std::vector<std::size_t>& shape,
                                  const std::string& source);

// Binds `tensors` to `config` (checked with require_valid first). Throws InputError,
// prefixed with `source`, for the first listed tensor that is held twice ("appears in
// more than one shard"), missing, or of another shape ("has shape [a, b], config
// implies [c, d]"), then for any tensor not listed that is_ignored_tensor does not
// accept ("unexpected tensor 'name'").
LlamaViews llama_views(const ModelConfig& config, const TensorViews& tensors, const std::string& source);

}  // namespace anatomy
