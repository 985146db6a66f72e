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
};

struct LlamaViews {
    ModelConfig config;
    TensorView embedding;                 // [V, D]  embed_tokens
    std::vector<LlamaLayerViews> layers;
    TensorView final_norm;                // [D]     norm
    TensorView lm_head;                   // [V, D]  only when untied (no bytes when tied)
};

// Binds `tensors` to `config` (checked with require_valid first). Throws InputError,
// prefixed with `source`, for the first listed tensor that is held twice ("appears in
// more than one shard"), missing, or of another shape ("has shape [a, b], config
// implies [c, d]"), then for any tensor not listed that is_ignored_tensor does not
// accept ("unexpected tensor 'name'").
LlamaViews llama_views(const ModelConfig& config, const TensorViews& tensors, const std::string& source);

}  // namespace anatomy
