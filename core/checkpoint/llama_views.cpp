#include "llama_views.hpp"

#include <set>

#include "../tensor.hpp"
#include "llama_tensors.hpp"

namespace anatomy {
namespace {

// Where the tensor of `spec` goes.
TensorView& slot(LlamaViews& v, const LlamaTensorSpec& spec) {
    LlamaLayerViews* l = spec.layer >= 0 ? &v.layers[std::size_t(spec.layer)] : nullptr;
    switch (spec.weight) {
        case LlamaWeight::embedding: return v.embedding;
        case LlamaWeight::attn_norm: return l->attn_norm;
        case LlamaWeight::wq: return l->wq;
        case LlamaWeight::wk: return l->wk;
        case LlamaWeight::wv: return l->wv;
        case LlamaWeight::wo: return l->wo;
        case LlamaWeight::ffn_norm: return l->ffn_norm;
        case LlamaWeight::w_gate: return l->w_gate;
        case LlamaWeight::w_up: return l->w_up;
        case LlamaWeight::w_down: return l->w_down;
        case LlamaWeight::final_norm: return v.final_norm;
        case LlamaWeight::lm_head: return v.lm_head;
        case LlamaWeight::sinks: return l->sinks;
    }
    return v.lm_head;
}

}  // namespace

const TensorView& required_tensor(const TensorViews& tensors, const std::string& name, const std::vector<std::size_t>& shape,
                                  const std::string& source) {
    const TensorView* found = nullptr;
    for (const TensorView& t : tensors) {
        if (t.name != name) continue;
        if (found) throw InputError(source + ": tensor '" + name + "' appears in more than one shard");
        found = &t;
    }
    if (!found) throw InputError(source + ": missing tensor '" + name + "'");
    if (found->shape != shape)
        throw InputError(source + ": tensor '" + name + "' has shape " + shape_text(found->shape) + ", config implies " +
                         shape_text(shape));
    return *found;
}

LlamaViews llama_views(const ModelConfig& config, const TensorViews& tensors, const std::string& source) {
    require_valid(config);
    LlamaViews views;
    views.config = config;
    views.layers.resize(std::size_t(config.n_layers));
    std::set<std::string> listed;
    for (const LlamaTensorSpec& spec : llama_tensor_specs(config)) {
        slot(views, spec) = required_tensor(tensors, spec.tensor.name, spec.tensor.shape, source);
        listed.insert(spec.tensor.name);
    }
    for (const TensorView& t : tensors) {
        if (listed.count(t.name) || is_ignored_tensor(t.name)) continue;
        const bool sinks = t.name.size() > 16 && t.name.compare(t.name.size() - 16, 16, ".self_attn.sinks") == 0;
        if (sinks && !config.attention_sinks)
            throw InputError(source + ": tensor '" + t.name + "' holds learned attention sinks, but the config does not say " +
                             "\"attention_sinks\": true (add it to config.json to run them)");
        throw InputError(source + ": unexpected tensor '" + t.name + "' (not part of a " +
                         std::string(config.tie_embeddings ? "tied" : "untied") + " Llama with this config)");
    }
    return views;
}

}  // namespace anatomy
