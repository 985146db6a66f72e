#include "pretrained_model.hpp"

#include <cstring>
#include <map>
#include <set>

#include "../checkpoint/hf_llama.hpp"

namespace anatomy {
namespace {

std::string show(const std::vector<std::size_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

}  // namespace

std::string to_string(WeightPrecision precision) {
    return precision == WeightPrecision::float32 ? "float32" : "bfloat16";
}

PretrainedModel pretrained_from_hf(const ModelConfig& config, const std::vector<const SafetensorsView*>& shards,
                                   const std::string& source, WeightPrecision precision, const ReleaseBytes& release) {
    require_valid(config);
    const std::vector<TensorSpec> specs = hf_tensor_specs(config);

    // Which shard holds each tensor: exactly one, with the shape the config implies.
    std::map<std::string, const SafetensorsView*> owner;
    for (const TensorSpec& spec : specs) {
        for (const SafetensorsView* shard : shards)
            if (shard->find(spec.name)) {
                if (owner.count(spec.name)) throw InputError(source + ": tensor '" + spec.name + "' appears in more than one shard");
                owner[spec.name] = shard;
            }
        if (!owner.count(spec.name)) throw InputError(source + ": missing tensor '" + spec.name + "'");
        const TensorEntry& entry = *owner[spec.name]->find(spec.name);
        if (entry.shape != spec.shape)
            throw InputError(source + ": tensor '" + spec.name + "' has shape " + show(entry.shape) + ", config implies " + show(spec.shape));
    }
    // Older transformers versions saved RoPE's inverse frequencies as a buffer; they
    // follow from rope_theta and head_dim, so such a tensor is ignored, not rejected.
    auto is_rope_buffer = [](const std::string& name) {
        const std::string suffix = ".self_attn.rotary_emb.inv_freq";
        return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    for (const SafetensorsView* shard : shards)
        for (const auto& [name, entry] : shard->tensors())
            if (!owner.count(name) && !is_rope_buffer(name))
                throw InputError(source + ": unexpected tensor '" + name + "' (not part of a " +
                                 std::string(config.tie_embeddings ? "tied" : "untied") + " Llama with this config)");

    PretrainedModel model;
    model.config = config;
    model.precision = precision;
    std::set<std::string> dtypes;
    for (const TensorSpec& spec : specs) model.parameters += spec.elements();

    // Norm scales are copied to float32; under bfloat16 they are first rounded like every other weight.
    auto vector = [&](const std::string& name) {
        const std::vector<float> values = owner.at(name)->read_floats(name);
        Vector<float> out(std::array<std::size_t, 1>{values.size()});
        for (std::size_t i = 0; i < values.size(); ++i)
            out(i) = precision == WeightPrecision::bfloat16 ? bfloat16_to_float(float_to_bfloat16(values[i])) : values[i];
        return out;
    };
    auto matrix = [&](const std::string& name) {
        WeightView view = weight_view(*owner.at(name), name);
        dtypes.insert(dtype_name(view.dtype));
        if (precision == WeightPrecision::float32 || view.dtype == DType::bf16) {
            model.bytes_in_place += view.size_bytes();
            return view;
        }
        // Round to bfloat16 once, row by row through the exact float32 widening.
        std::vector<std::uint16_t> copy(view.elements());
        std::vector<float> buffer(view.cols);
        for (std::size_t j = 0; j < view.rows; ++j) {
            const float* row = view.row(j, buffer.data());
            for (std::size_t i = 0; i < view.cols; ++i) copy[j * view.cols + i] = float_to_bfloat16(row[i]);
        }
        if (release) release(view.bytes, view.size_bytes());
        model.converted.push_back(std::move(copy));
        WeightView held{reinterpret_cast<const std::uint8_t*>(model.converted.back().data()), DType::bf16, view.rows, view.cols};
        model.bytes_converted += held.size_bytes();
        return held;
    };

    model.embedding = matrix("model.embed_tokens.weight");
    for (int i = 0; i < config.n_layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        PretrainedLayer l;
        l.attn_norm = vector(p + "input_layernorm.weight");
        l.wq = matrix(p + "self_attn.q_proj.weight");
        l.wk = matrix(p + "self_attn.k_proj.weight");
        l.wv = matrix(p + "self_attn.v_proj.weight");
        l.wo = matrix(p + "self_attn.o_proj.weight");
        l.ffn_norm = vector(p + "post_attention_layernorm.weight");
        l.w_gate = matrix(p + "mlp.gate_proj.weight");
        l.w_up = matrix(p + "mlp.up_proj.weight");
        l.w_down = matrix(p + "mlp.down_proj.weight");
        model.layers.push_back(std::move(l));
    }
    model.final_norm = vector("model.norm.weight");
    model.lm_head = config.tie_embeddings ? model.embedding : matrix("lm_head.weight");
    for (const std::string& d : dtypes) model.stored_dtypes += (model.stored_dtypes.empty() ? "" : ", ") + d;
    return model;
}

}  // namespace anatomy
