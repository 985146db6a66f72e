// The one list of a Llama decoder's tensors: which weights a config implies, the
// Hugging Face name of each (the names every weight source is read under), its
// stored shape, and the one rule for tensors a checkpoint may hold beyond them.
// The writer (hf_llama.cpp), the binder every loader goes through (llama_views.cpp)
// and every source (tensor_views.hpp) name tensors only through this file.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "../model/model_config.hpp"
#include "safetensors.hpp"

namespace anatomy {

// Each weight, named as in core/model/weights.hpp (the Hugging Face names in the comments).
enum class LlamaWeight {
    embedding,   // model.embed_tokens.weight
    attn_norm,   // model.layers.{i}.input_layernorm.weight
    wq,          // model.layers.{i}.self_attn.q_proj.weight
    wk,          // model.layers.{i}.self_attn.k_proj.weight
    wv,          // model.layers.{i}.self_attn.v_proj.weight
    wo,          // model.layers.{i}.self_attn.o_proj.weight
    ffn_norm,    // model.layers.{i}.post_attention_layernorm.weight
    w_gate,      // model.layers.{i}.mlp.gate_proj.weight
    w_up,        // model.layers.{i}.mlp.up_proj.weight
    w_down,      // model.layers.{i}.mlp.down_proj.weight
    final_norm,  // model.norm.weight
    lm_head,     // lm_head.weight (only when the embeddings are not tied)
    sinks,       // model.layers.{i}.self_attn.sinks (only with attention sinks; gpt-oss's name)
};

// The weights of one layer, in checkpoint order.
inline constexpr std::array<LlamaWeight, 9> layer_weights = {
    LlamaWeight::attn_norm, LlamaWeight::wq,     LlamaWeight::wk,   LlamaWeight::wv,     LlamaWeight::wo,
    LlamaWeight::ffn_norm,  LlamaWeight::w_gate, LlamaWeight::w_up, LlamaWeight::w_down,
};

// The Hugging Face name of `weight` (of layer `layer`; ignored outside the layers).
std::string hf_tensor_name(LlamaWeight weight, int layer);

// Its shape as every source stores it, projections [out, in]:
//   embedding, lm_head [V, D]; wq [Hq*dh, D]; wk, wv [Hkv*dh, D]; wo [D, Hq*dh];
//   w_gate, w_up [F, D]; w_down [D, F]; the norm scales [D]; sinks [Hq].
std::vector<std::size_t> stored_shape(const ModelConfig& config, LlamaWeight weight);

struct LlamaTensorSpec {
    LlamaWeight weight;
    int layer;          // -1 outside the layers
    TensorSpec tensor;  // the Hugging Face name and the stored shape
};

// Every tensor a model with this config has, in Hugging Face checkpoint order:
// embedding; per layer the nine of layer_weights, then sinks with attention sinks;
// final norm; lm_head when untied.
std::vector<LlamaTensorSpec> llama_tensor_specs(const ModelConfig& config);
// The same as (name, shape) pairs, the order hf_tensors writes them.
std::vector<TensorSpec> hf_tensor_specs(const ModelConfig& config);

// The rule for unknown-but-harmless tensors, which every loader follows: a tensor
// the config does not imply is accepted and ignored when it is one of these, and
// otherwise is an InputError naming it. There is one:
//   model.layers.{i}.self_attn.rotary_emb.inv_freq  RoPE's inverse frequencies,
//     which older transformers versions saved as a buffer; they follow from
//     rope_theta and head_dim, so the value is not read (nor its shape checked).
bool is_ignored_tensor(const std::string& name);

}  // namespace anatomy
