#include "llama_tensors.hpp"

namespace anatomy {

std::string hf_tensor_name(LlamaWeight weight, int layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    switch (weight) {
        case LlamaWeight::embedding: return "model.embed_tokens.weight";
        case LlamaWeight::attn_norm: return p + "input_layernorm.weight";
        case LlamaWeight::wq: return p + "self_attn.q_proj.weight";
        case LlamaWeight::wk: return p + "self_attn.k_proj.weight";
        case LlamaWeight::wv: return p + "self_attn.v_proj.weight";
        case LlamaWeight::wo: return p + "self_attn.o_proj.weight";
        case LlamaWeight::ffn_norm: return p + "post_attention_layernorm.weight";
        case LlamaWeight::w_gate: return p + "mlp.gate_proj.weight";
        case LlamaWeight::w_up: return p + "mlp.up_proj.weight";
        case LlamaWeight::w_down: return p + "mlp.down_proj.weight";
        case LlamaWeight::final_norm: return "model.norm.weight";
        case LlamaWeight::lm_head: return "lm_head.weight";
        case LlamaWeight::sinks: return p + "self_attn.sinks";
    }
    return "";
}

std::vector<std::size_t> stored_shape(const ModelConfig& c, LlamaWeight weight) {
    const std::size_t D = c.hidden_size, V = c.vocab_size, F = c.ffn_size;
    const std::size_t q_width = std::size_t(c.n_heads) * c.head_dim;
    const std::size_t kv_width = std::size_t(c.n_kv_heads) * c.head_dim;
    switch (weight) {
        case LlamaWeight::embedding:
        case LlamaWeight::lm_head: return {V, D};
        case LlamaWeight::attn_norm:
        case LlamaWeight::ffn_norm:
        case LlamaWeight::final_norm: return {D};
        case LlamaWeight::wq: return {q_width, D};
        case LlamaWeight::wk:
        case LlamaWeight::wv: return {kv_width, D};
        case LlamaWeight::wo: return {D, q_width};
        case LlamaWeight::w_gate:
        case LlamaWeight::w_up: return {F, D};
        case LlamaWeight::w_down: return {D, F};
        case LlamaWeight::sinks: return {std::size_t(c.n_heads)};
    }
    return {};
}

std::vector<LlamaTensorSpec> llama_tensor_specs(const ModelConfig& c) {
    std::vector<LlamaTensorSpec> specs;
    auto add = [&](LlamaWeight weight, int layer) {
        specs.push_back({weight, layer, {hf_tensor_name(weight, layer), stored_shape(c, weight)}});
    };
    add(LlamaWeight::embedding, -1);
    for (int i = 0; i < c.n_layers; ++i) {
        for (LlamaWeight weight : layer_weights) add(weight, i);
        if (c.attention_sinks) add(LlamaWeight::sinks, i);
    }
    add(LlamaWeight::final_norm, -1);
    if (!c.tie_embeddings) add(LlamaWeight::lm_head, -1);
    return specs;
}

std::vector<TensorSpec> hf_tensor_specs(const ModelConfig& config) {
    std::vector<TensorSpec> out;
    for (const LlamaTensorSpec& spec : llama_tensor_specs(config)) out.push_back(spec.tensor);
    return out;
}

bool is_ignored_tensor(const std::string& name) {
    const std::string suffix = ".self_attn.rotary_emb.inv_freq";
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace anatomy
