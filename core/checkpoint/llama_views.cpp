#include "llama_views.hpp"

#include <map>

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
    }
    return v.lm_head;
}

}  // namespace

LlamaViews llama_views(const ModelConfig& config, const TensorViews& tensors, const std::string& source) {
    require_valid(config);
    std::multimap<std::string, const TensorView*> by_name;
    for (const TensorView& t : tensors) by_name.emplace(t.name, &t);

    LlamaViews views;
    views.config = config;
    views.layers.resize(std::size_t(config.n_layers));
    for (const LlamaTensorSpec& spec : llama_tensor_specs(config)) {
        const std::string& name = spec.tensor.name;
        const std::size_t copies = by_name.count(name);
        if (copies > 1) throw InputError(source + ": tensor '" + name + "' appears in more than one shard");
        if (copies == 0) throw InputError(source + ": missing tensor '" + name + "'");
        const TensorView& found = *by_name.find(name)->second;
        if (found.shape != spec.tensor.shape)
            throw InputError(source + ": tensor '" + name + "' has shape " + shape_text(found.shape) + ", config implies " +
                             shape_text(spec.tensor.shape));
        slot(views, spec) = found;
        by_name.erase(name);
    }
    for (const TensorView& t : tensors)
        if (by_name.count(t.name) && !is_ignored_tensor(t.name))
            throw InputError(source + ": unexpected tensor '" + t.name + "' (not part of a " +
                             std::string(config.tie_embeddings ? "tied" : "untied") + " Llama with this config)");
    return views;
}

}  // namespace anatomy
