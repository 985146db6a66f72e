#include "model_config.hpp"

#include <nlohmann/json.hpp>

#include "../tensor.hpp"

namespace anatomy {

ModelConfig tiny_config() {
    ModelConfig c;
    c.name = "tiny";
    c.vocab_size = 32;
    c.hidden_size = 32;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;   // heads 0,1 share KV head 0; heads 2,3 share KV head 1
    c.head_dim = 8;     // 4 heads x 8 channels = 32 = hidden_size
    c.ffn_size = 96;    // 3 x hidden, as in the seed's [32, 96] expansion
    c.rope_theta = 10000.0;
    c.rms_norm_eps = 1e-6;
    c.rope_pairing = RopePairing::half_split;
    c.tie_embeddings = true;
    return c;
}

ModelConfig tinyllama_config() {
    ModelConfig c;
    c.name = "tinyllama-1.1b";
    c.vocab_size = 32000;
    c.hidden_size = 2048;
    c.n_layers = 22;
    c.n_heads = 32;
    c.n_kv_heads = 4;
    c.head_dim = 64;
    c.ffn_size = 5632;
    c.rope_theta = 10000.0;
    c.rms_norm_eps = 1e-5;  // the published checkpoint's rms_norm_eps
    c.rope_pairing = RopePairing::half_split;
    c.tie_embeddings = false;  // the published checkpoint has its own lm_head
    return c;
}

ModelConfig llama2c_stories_config(std::string_view name) {
    // llama2.c's TinyStories models (karpathy/tinyllamas): dim, hidden_dim, layers,
    // heads, KV heads, vocabulary; adjacent-pair RoPE, eps 1e-5, tied classifier.
    struct Shape {
        const char* name;
        int dim, hidden, layers, heads, kv_heads, vocab;
    };
    static const Shape shapes[] = {{"stories260k", 64, 172, 5, 8, 4, 512},
                                   {"stories15m", 288, 768, 6, 6, 6, 32000},
                                   {"stories42m", 512, 1376, 8, 8, 8, 32000},
                                   {"stories110m", 768, 2048, 12, 12, 12, 32000}};
    for (const Shape& s : shapes) {
        if (name != s.name) continue;
        ModelConfig c;
        c.name = s.name;
        c.vocab_size = s.vocab;
        c.hidden_size = s.dim;
        c.n_layers = s.layers;
        c.n_heads = s.heads;
        c.n_kv_heads = s.kv_heads;
        c.head_dim = s.dim / s.heads;
        c.ffn_size = s.hidden;
        c.rope_theta = 10000.0;
        c.rms_norm_eps = 1e-5;
        c.rope_pairing = RopePairing::interleaved;
        c.tie_embeddings = true;
        return c;
    }
    throw InputError("no llama2.c stories preset '" + std::string(name) + "'");
}

std::vector<std::string> preset_names() {
    return {"tiny", "tinyllama-1.1b", "stories260k", "stories15m", "stories42m", "stories110m"};
}

std::optional<ModelConfig> preset_config(std::string_view name) {
    if (name == "tiny") return tiny_config();
    if (name == "tinyllama-1.1b") return tinyllama_config();
    if (name.rfind("stories", 0) == 0) {
        for (const std::string& known : preset_names())
            if (known == name) return llama2c_stories_config(name);
    }
    return std::nullopt;
}

double ModelConfig::parameter_count() const {
    const double D = hidden_size, F = ffn_size, V = vocab_size, q = double(n_heads) * head_dim, kv = double(n_kv_heads) * head_dim;
    const double layer = 2 * D + D * q + 2 * D * kv + q * D + 3 * D * F;
    return V * D * (tie_embeddings ? 1 : 2) + D + double(n_layers) * (layer + (attention_sinks ? n_heads : 0));
}

std::string config_problem(const ModelConfig& c) {
    auto positive = [](int value) { return value > 0; };
    if (!positive(c.vocab_size)) return "vocab_size must be positive";
    if (!positive(c.hidden_size)) return "hidden_size must be positive";
    if (!positive(c.n_layers)) return "n_layers must be positive";
    if (!positive(c.n_heads)) return "n_heads must be positive";
    if (!positive(c.n_kv_heads)) return "n_kv_heads must be positive";
    if (!positive(c.head_dim)) return "head_dim must be positive";
    if (!positive(c.ffn_size)) return "ffn_size must be positive";
    if (c.n_heads % c.n_kv_heads != 0)
        return "n_heads (" + std::to_string(c.n_heads) + ") must be a multiple of n_kv_heads (" +
               std::to_string(c.n_kv_heads) + ")";
    if (c.head_dim % 2 != 0) return "head_dim must be even: RoPE rotates channel pairs";
    if (!(c.rope_theta > 1.0)) return "rope_theta must be greater than 1";
    if (!(c.rms_norm_eps > 0.0)) return "rms_norm_eps must be positive";
    return {};
}

void require_valid(const ModelConfig& config) {
    const std::string problem = config_problem(config);
    if (!problem.empty()) throw InputError("invalid model config: " + problem);
}

nlohmann::json config_to_json(const ModelConfig& c) {
    nlohmann::json j = {
        {"name", c.name},
        {"vocab_size", c.vocab_size},
        {"hidden_size", c.hidden_size},
        {"n_layers", c.n_layers},
        {"n_heads", c.n_heads},
        {"n_kv_heads", c.n_kv_heads},
        {"head_dim", c.head_dim},
        {"ffn_size", c.ffn_size},
        {"rope_theta", c.rope_theta},
        {"rms_norm_eps", c.rms_norm_eps},
        {"rope_pairing", to_string(c.rope_pairing)},
        {"tie_embeddings", c.tie_embeddings},
    };
    if (c.attention_sinks) j["attention_sinks"] = true;  // absent means false: a model without sinks is written as before
    return j;
}

ModelConfig config_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InputError("model config must be a JSON object");
    auto integer = [&](const char* key) {
        if (!j.contains(key)) throw InputError(std::string("model config: missing field '") + key + "'");
        if (!j[key].is_number_integer()) throw InputError(std::string("model config: field '") + key + "' must be an integer");
        return j[key].get<int>();
    };
    auto number = [&](const char* key, double fallback) {
        if (!j.contains(key)) return fallback;
        if (!j[key].is_number()) throw InputError(std::string("model config: field '") + key + "' must be a number");
        return j[key].get<double>();
    };
    auto text = [&](const char* key, const char* fallback) {
        if (!j.contains(key)) return std::string(fallback);
        if (!j[key].is_string()) throw InputError(std::string("model config: field '") + key + "' must be a string");
        return j[key].get<std::string>();
    };
    ModelConfig c;
    c.name = text("name", "custom");
    c.vocab_size = integer("vocab_size");
    c.hidden_size = integer("hidden_size");
    c.n_layers = integer("n_layers");
    c.n_heads = integer("n_heads");
    c.n_kv_heads = integer("n_kv_heads");
    c.head_dim = integer("head_dim");
    c.ffn_size = integer("ffn_size");
    c.rope_theta = number("rope_theta", 10000.0);
    c.rms_norm_eps = number("rms_norm_eps", 1e-6);
    c.rope_pairing = rope_pairing_from_string(text("rope_pairing", "half_split"));
    if (j.contains("tie_embeddings") && !j["tie_embeddings"].is_boolean())
        throw InputError("model config: field 'tie_embeddings' must be true or false");
    c.tie_embeddings = j.value("tie_embeddings", true);
    if (j.contains("attention_sinks") && !j["attention_sinks"].is_boolean())
        throw InputError("model config: field 'attention_sinks' must be true or false");
    c.attention_sinks = j.value("attention_sinks", false);
    require_valid(c);
    return c;
}

}  // namespace anatomy
