#include "hf_llama.hpp"

#include <algorithm>
#include <climits>
#include <set>

#include <nlohmann/json.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmanipulation.hpp>

namespace anatomy {
namespace {

std::string layer_prefix(int layer) { return "model.layers." + std::to_string(layer) + "."; }

template <std::size_t N>
NamedTensor named(std::string name, const xt::xtensor<float, N>& tensor) {
    NamedTensor t{std::move(name), {tensor.shape().begin(), tensor.shape().end()}, {}};
    t.values.assign(tensor.begin(), tensor.end());
    return t;
}

// A projection stored [in, out] here becomes [out, in] in the checkpoint.
NamedTensor projection(std::string name, const Matrix<float>& w) {
    return named(std::move(name), Matrix<float>(xt::transpose(w)));
}

// Reorders the output columns of w [in, H*dh] head by head: column h*dh + i takes column h*dh + order[i].
Matrix<float> permute_head_columns(const Matrix<float>& w, std::size_t head_dim, const std::vector<std::size_t>& order) {
    Matrix<float> out(w.shape());
    for (std::size_t r = 0; r < w.shape(0); ++r)
        for (std::size_t c = 0; c < w.shape(1); ++c) {
            const std::size_t head = c / head_dim, i = c % head_dim;
            out(r, c) = w(r, head * head_dim + order[i]);
        }
    return out;
}

}  // namespace

std::vector<std::size_t> interleaved_to_half_split(std::size_t head_dim) {
    std::vector<std::size_t> order(head_dim);
    for (std::size_t i = 0; i < head_dim / 2; ++i) {
        order[i] = 2 * i;
        order[i + head_dim / 2] = 2 * i + 1;
    }
    return order;
}

nlohmann::json hf_config_json(const ModelConfig& c, DType dtype) {
    const char* torch_dtype = dtype == DType::f32 ? "float32" : dtype == DType::f16 ? "float16" : "bfloat16";
    return {
        {"architectures", {"LlamaForCausalLM"}},
        {"model_type", "llama"},
        {"vocab_size", c.vocab_size},
        {"hidden_size", c.hidden_size},
        {"num_hidden_layers", c.n_layers},
        {"num_attention_heads", c.n_heads},
        {"num_key_value_heads", c.n_kv_heads},
        {"head_dim", c.head_dim},
        {"intermediate_size", c.ffn_size},
        {"rope_theta", c.rope_theta},
        {"rms_norm_eps", c.rms_norm_eps},
        {"hidden_act", "silu"},
        {"tie_word_embeddings", c.tie_embeddings},
        {"torch_dtype", torch_dtype},
        {"max_position_embeddings", 2048},
        {"attention_bias", false},
        {"mlp_bias", false},
        {"bos_token_id", 1},
        {"eos_token_id", 2},
    };
}

ModelConfig config_from_hf_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InputError("config.json must be a JSON object");
    auto integer = [&](const char* key) {
        if (!j.contains(key)) throw InputError(std::string("config.json: missing field '") + key + "'");
        if (!j[key].is_number_integer()) throw InputError(std::string("config.json: field '") + key + "' must be an integer");
        const std::int64_t value = j[key].get<std::int64_t>();
        if (value < INT32_MIN || value > INT32_MAX) throw InputError(std::string("config.json: field '") + key + "' is out of range");
        return int(value);
    };
    auto number = [&](const char* key, double fallback) {
        if (!j.contains(key)) return fallback;
        if (!j[key].is_number()) throw InputError(std::string("config.json: field '") + key + "' must be a number");
        return j[key].get<double>();
    };
    // A field that, when present, must hold `expected` for the model we run.
    auto require_value = [&](const char* key, const nlohmann::json& expected, const char* why) {
        if (j.contains(key) && !j[key].is_null() && j[key] != expected)
            throw InputError(std::string("config.json: ") + key + " is " + j[key].dump() + ", but " + why);
    };
    ModelConfig c;
    if (j.contains("_name_or_path") && !j["_name_or_path"].is_string())
        throw InputError("config.json: field '_name_or_path' must be a string");
    c.name = j.value("_name_or_path", std::string("checkpoint"));
    if (c.name.empty()) c.name = "checkpoint";
    if (j.contains("model_type") && j["model_type"] != "llama")
        throw InputError("config.json: model_type is " + j["model_type"].dump() + ", expected \"llama\"");
    if (j.contains("architectures")) {
        const nlohmann::json& a = j["architectures"];
        if (!a.is_array() || std::find(a.begin(), a.end(), nlohmann::json("LlamaForCausalLM")) == a.end())
            throw InputError("config.json: architectures is " + a.dump() + ", expected [\"LlamaForCausalLM\"]");
    }
    require_value("hidden_act", "silu", "this decoder's feed-forward is SwiGLU (silu)");
    require_value("attention_bias", false, "this decoder's projections have no bias");
    require_value("mlp_bias", false, "this decoder's projections have no bias");
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
        throw InputError("config.json: rope_scaling " + j["rope_scaling"].dump() + " is not supported (plain RoPE only)");
    c.vocab_size = integer("vocab_size");
    c.hidden_size = integer("hidden_size");
    c.n_layers = integer("num_hidden_layers");
    c.n_heads = integer("num_attention_heads");
    c.n_kv_heads = j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null() ? integer("num_key_value_heads")
                                                                                              : c.n_heads;
    c.ffn_size = integer("intermediate_size");
    if (j.contains("head_dim") && !j["head_dim"].is_null()) c.head_dim = integer("head_dim");
    else c.head_dim = c.n_heads > 0 ? c.hidden_size / c.n_heads : 0;
    c.rope_theta = number("rope_theta", 10000.0);
    c.rms_norm_eps = number("rms_norm_eps", 1e-6);
    c.rope_pairing = RopePairing::half_split;
    // transformers' LlamaConfig defaults tie_word_embeddings to false: an untied checkpoint needs lm_head.weight.
    if (j.contains("tie_word_embeddings") && !j["tie_word_embeddings"].is_boolean())
        throw InputError("config.json: field 'tie_word_embeddings' must be true or false");
    c.tie_embeddings = j.value("tie_word_embeddings", false);
    require_valid(c);
    return c;
}

HfCheckpointInfo hf_checkpoint_info(const nlohmann::json& j) {
    if (!j.is_object()) throw InputError("config.json must be a JSON object");
    HfCheckpointInfo info;
    auto token_id = [&](const nlohmann::json& value, const char* key) {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > INT32_MAX)
            throw InputError(std::string("config.json: ") + key + " must be a non-negative integer (or a list of them), not " +
                             value.dump());
        return std::int32_t(value.get<std::int64_t>());
    };
    if (j.contains("architectures") && j["architectures"].is_array())
        for (const nlohmann::json& a : j["architectures"])
            if (a.is_string()) info.architectures.push_back(a.get<std::string>());
    if (j.contains("torch_dtype") && !j["torch_dtype"].is_null()) {
        if (!j["torch_dtype"].is_string()) throw InputError("config.json: torch_dtype must be a string");
        info.torch_dtype = j["torch_dtype"].get<std::string>();
    }
    if (j.contains("bos_token_id") && !j["bos_token_id"].is_null()) info.bos_token_id = token_id(j["bos_token_id"], "bos_token_id");
    if (j.contains("eos_token_id") && !j["eos_token_id"].is_null()) {
        const nlohmann::json& eos = j["eos_token_id"];
        if (eos.is_array())
            for (const nlohmann::json& id : eos) info.eos_token_ids.push_back(token_id(id, "eos_token_id"));
        else
            info.eos_token_ids.push_back(token_id(eos, "eos_token_id"));
    }
    if (j.contains("max_position_embeddings") && !j["max_position_embeddings"].is_null()) {
        if (!j["max_position_embeddings"].is_number_integer()) throw InputError("config.json: max_position_embeddings must be an integer");
        info.max_position_embeddings = j["max_position_embeddings"].get<std::int64_t>();
    }
    return info;
}

std::vector<TensorSpec> hf_tensor_specs(const ModelConfig& c) {
    const std::size_t D = c.hidden_size, V = c.vocab_size, F = c.ffn_size;
    const std::size_t q_width = std::size_t(c.n_heads) * c.head_dim;
    const std::size_t kv_width = std::size_t(c.n_kv_heads) * c.head_dim;
    std::vector<TensorSpec> specs;
    specs.push_back({"model.embed_tokens.weight", {V, D}});
    for (int i = 0; i < c.n_layers; ++i) {
        const std::string p = layer_prefix(i);
        specs.push_back({p + "input_layernorm.weight", {D}});
        specs.push_back({p + "self_attn.q_proj.weight", {q_width, D}});
        specs.push_back({p + "self_attn.k_proj.weight", {kv_width, D}});
        specs.push_back({p + "self_attn.v_proj.weight", {kv_width, D}});
        specs.push_back({p + "self_attn.o_proj.weight", {D, q_width}});
        specs.push_back({p + "post_attention_layernorm.weight", {D}});
        specs.push_back({p + "mlp.gate_proj.weight", {F, D}});
        specs.push_back({p + "mlp.up_proj.weight", {F, D}});
        specs.push_back({p + "mlp.down_proj.weight", {D, F}});
    }
    specs.push_back({"model.norm.weight", {D}});
    if (!c.tie_embeddings) specs.push_back({"lm_head.weight", {V, D}});
    return specs;
}

void for_each_hf_tensor(const Model<float>& model, const std::function<void(NamedTensor&&)>& visit) {
    const ModelConfig& c = model.config;
    const ModelWeights<float>& w = model.weights;
    const bool permute = c.rope_pairing == RopePairing::interleaved;
    const std::vector<std::size_t> order = interleaved_to_half_split(std::size_t(c.head_dim));

    visit(named("model.embed_tokens.weight", w.embedding));
    for (int i = 0; i < c.n_layers; ++i) {
        const LayerWeights<float>& l = w.layers[std::size_t(i)];
        const std::string p = layer_prefix(i);
        visit(named(p + "input_layernorm.weight", l.attn_norm));
        visit(projection(p + "self_attn.q_proj.weight", permute ? permute_head_columns(l.wq, c.head_dim, order) : l.wq));
        visit(projection(p + "self_attn.k_proj.weight", permute ? permute_head_columns(l.wk, c.head_dim, order) : l.wk));
        visit(projection(p + "self_attn.v_proj.weight", l.wv));
        visit(projection(p + "self_attn.o_proj.weight", l.wo));
        visit(named(p + "post_attention_layernorm.weight", l.ffn_norm));
        visit(projection(p + "mlp.gate_proj.weight", l.w_gate));
        visit(projection(p + "mlp.up_proj.weight", l.w_up));
        visit(projection(p + "mlp.down_proj.weight", l.w_down));
    }
    visit(named("model.norm.weight", w.final_norm));
    if (!c.tie_embeddings) visit(projection("lm_head.weight", w.lm_head));
}

std::vector<NamedTensor> hf_tensors(const Model<float>& model) {
    std::vector<NamedTensor> out;
    for_each_hf_tensor(model, [&](NamedTensor&& t) { out.push_back(std::move(t)); });
    return out;
}

std::map<std::string, std::string> hf_safetensors_metadata() {
    return {{"format", "pt"}, {"producer", "attention-anatomy"}};
}

std::vector<std::uint8_t> hf_safetensors(const Model<float>& model, DType dtype) {
    return write_safetensors(hf_tensors(model), dtype, hf_safetensors_metadata());
}

Model<float> model_from_hf(const ModelConfig& config, const std::vector<const SafetensorsView*>& shards,
                           const std::string& source) {
    require_valid(config);
    std::set<std::string> expected_names;

    // Finds `name` in exactly one shard and checks its shape before reading it.
    auto load = [&](const std::string& name, std::vector<std::size_t> shape) {
        expected_names.insert(name);
        const SafetensorsView* owner = nullptr;
        for (const SafetensorsView* shard : shards)
            if (shard->find(name)) {
                if (owner) throw InputError(source + ": tensor '" + name + "' appears in more than one shard");
                owner = shard;
            }
        if (!owner) throw InputError(source + ": missing tensor '" + name + "'");
        const TensorEntry& entry = *owner->find(name);
        if (entry.shape != shape) {
            auto show = [](const std::vector<std::size_t>& s) {
                std::string t = "[";
                for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
                return t + "]";
            };
            throw InputError(source + ": tensor '" + name + "' has shape " + show(entry.shape) + ", config implies " + show(shape));
        }
        return owner->read_floats(name);
    };
    auto vector = [&](const std::string& name, std::size_t n) {
        return Vector<float>(xt::adapt(load(name, {n}), std::array<std::size_t, 1>{n}));
    };
    auto matrix = [&](const std::string& name, std::size_t rows, std::size_t cols) {
        return Matrix<float>(xt::adapt(load(name, {rows, cols}), std::array<std::size_t, 2>{rows, cols}));
    };
    // A checkpoint projection [out, in] becomes our [in, out].
    auto projection_in_out = [&](const std::string& name, std::size_t in, std::size_t out) {
        return Matrix<float>(xt::transpose(matrix(name, out, in)));
    };

    const std::size_t D = config.hidden_size, V = config.vocab_size, F = config.ffn_size;
    const std::size_t q_width = std::size_t(config.n_heads) * config.head_dim;
    const std::size_t kv_width = std::size_t(config.n_kv_heads) * config.head_dim;
    Model<float> model{config, {}};
    model.weights.embedding = matrix("model.embed_tokens.weight", V, D);
    for (int i = 0; i < config.n_layers; ++i) {
        const std::string p = layer_prefix(i);
        LayerWeights<float> l;
        l.attn_norm = vector(p + "input_layernorm.weight", D);
        l.wq = projection_in_out(p + "self_attn.q_proj.weight", D, q_width);
        l.wk = projection_in_out(p + "self_attn.k_proj.weight", D, kv_width);
        l.wv = projection_in_out(p + "self_attn.v_proj.weight", D, kv_width);
        l.wo = projection_in_out(p + "self_attn.o_proj.weight", q_width, D);
        l.ffn_norm = vector(p + "post_attention_layernorm.weight", D);
        l.w_gate = projection_in_out(p + "mlp.gate_proj.weight", D, F);
        l.w_up = projection_in_out(p + "mlp.up_proj.weight", D, F);
        l.w_down = projection_in_out(p + "mlp.down_proj.weight", F, D);
        model.weights.layers.push_back(std::move(l));
    }
    model.weights.final_norm = vector("model.norm.weight", D);
    if (!config.tie_embeddings) model.weights.lm_head = projection_in_out("lm_head.weight", D, V);

    for (const SafetensorsView* shard : shards)
        for (const auto& [name, entry] : shard->tensors())
            if (!expected_names.count(name))
                throw InputError(source + ": unexpected tensor '" + name + "' (not part of a " +
                                 std::string(config.tie_embeddings ? "tied" : "untied") + " Llama with this config)");
    return model;
}

}  // namespace anatomy
