#include "hf_llama.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "../json_input.hpp"
#include "model_from_views.hpp"

namespace anatomy {
namespace {

template <std::size_t N>
NamedTensor named(std::string name, const xt::xtensor<float, N>& tensor) {
    NamedTensor t{std::move(name), {tensor.shape().begin(), tensor.shape().end()}, {}};
    t.values.assign(tensor.data(), tensor.data() + tensor.size());  // row-major, as stored
    return t;
}

// A projection stored [in, out] here becomes [out, in] in the checkpoint.
NamedTensor projection(std::string name, const Matrix<float>& w) {
    const std::size_t in = w.shape(0), out = w.shape(1);
    NamedTensor t{std::move(name), {out, in}, std::vector<float>(in * out)};
    const float* stored = w.data();  // [in, out]
    for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < in; ++i) t.values[o * in + i] = stored[i * out + o];  // [out, in]
    return t;
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

// The tensor of `spec` in checkpoint layout. For an interleaved-RoPE model the q
// and k output channels of each head are permuted to the half-split order.
NamedTensor hf_tensor(const Model<float>& model, const LlamaTensorSpec& spec) {
    const ModelConfig& c = model.config;
    const ModelWeights<float>& w = model.weights;
    const LayerWeights<float>* l = spec.layer >= 0 ? &w.layers[std::size_t(spec.layer)] : nullptr;
    const std::string& name = spec.tensor.name;
    const std::size_t dh = std::size_t(c.head_dim);
    auto half_split = [&](const Matrix<float>& m) {
        return c.rope_pairing == RopePairing::interleaved ? permute_head_columns(m, dh, interleaved_to_half_split(dh)) : m;
    };
    switch (spec.weight) {
        case LlamaWeight::embedding: return named(name, w.embedding);
        case LlamaWeight::attn_norm: return named(name, l->attn_norm);
        case LlamaWeight::wq: return projection(name, half_split(l->wq));
        case LlamaWeight::wk: return projection(name, half_split(l->wk));
        case LlamaWeight::wv: return projection(name, l->wv);
        case LlamaWeight::wo: return projection(name, l->wo);
        case LlamaWeight::ffn_norm: return named(name, l->ffn_norm);
        case LlamaWeight::w_gate: return projection(name, l->w_gate);
        case LlamaWeight::w_up: return projection(name, l->w_up);
        case LlamaWeight::w_down: return projection(name, l->w_down);
        case LlamaWeight::final_norm: return named(name, w.final_norm);
        case LlamaWeight::lm_head: return projection(name, w.lm_head);
        case LlamaWeight::sinks: return named(name, l->sinks);
    }
    throw std::logic_error("hf_tensor: unknown weight");
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
    nlohmann::json j = {
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
    // Not a field of transformers' LlamaConfig, which would run the model without its sinks:
    // this project's readers take it (the tensors are gpt-oss's, model.layers.{i}.self_attn.sinks).
    if (c.attention_sinks) j["attention_sinks"] = true;
    return j;
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
            throw InputError(std::string("config.json: ") + key + " is " + json_excerpt(j[key]) + ", but " + why);
    };
    ModelConfig c;
    if (j.contains("_name_or_path") && !j["_name_or_path"].is_string())
        throw InputError("config.json: field '_name_or_path' must be a string");
    c.name = j.value("_name_or_path", std::string("checkpoint"));
    if (c.name.empty()) c.name = "checkpoint";
    if (j.contains("model_type") && j["model_type"] != "llama")
        throw InputError("config.json: model_type is " + json_excerpt(j["model_type"]) + ", expected \"llama\"");
    if (j.contains("architectures")) {
        const nlohmann::json& a = j["architectures"];
        if (!a.is_array() || std::find(a.begin(), a.end(), nlohmann::json("LlamaForCausalLM")) == a.end())
            throw InputError("config.json: architectures is " + json_excerpt(a) + ", expected [\"LlamaForCausalLM\"]");
    }
    require_value("hidden_act", "silu", "this decoder's feed-forward is SwiGLU (silu)");
    require_value("attention_bias", false, "this decoder's projections have no bias");
    require_value("mlp_bias", false, "this decoder's projections have no bias");
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
        throw InputError("config.json: rope_scaling " + json_excerpt(j["rope_scaling"]) + " is not supported (plain RoPE only)");
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
    if (j.contains("attention_sinks") && !j["attention_sinks"].is_boolean())
        throw InputError("config.json: field 'attention_sinks' must be true or false");
    c.attention_sinks = j.value("attention_sinks", false);
    require_valid(c);
    return c;
}

HfCheckpointInfo hf_checkpoint_info(const nlohmann::json& j) {
    if (!j.is_object()) throw InputError("config.json must be a JSON object");
    HfCheckpointInfo info;
    auto token_id = [&](const nlohmann::json& value, const char* key) {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > INT32_MAX)
            throw InputError(std::string("config.json: ") + key + " must be a non-negative integer (or a list of them), not " +
                             json_excerpt(value));
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

void for_each_hf_tensor(const Model<float>& model, const std::function<void(NamedTensor&&)>& visit) {
    for (const LlamaTensorSpec& spec : llama_tensor_specs(model.config)) visit(hf_tensor(model, spec));
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
    return model_from_views(llama_views(config, safetensors_views(shards), source));
}

}  // namespace anatomy
