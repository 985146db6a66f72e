#include "model_config.hpp"

#include <nlohmann/json.hpp>

#include "tensor.hpp"

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

std::vector<std::string> preset_names() { return {"tiny", "tinyllama-1.1b"}; }

std::optional<ModelConfig> preset_config(std::string_view name) {
    if (name == "tiny") return tiny_config();
    if (name == "tinyllama-1.1b") return tinyllama_config();
    return std::nullopt;
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

std::string to_string(RopePairing pairing) {
    return pairing == RopePairing::half_split ? "half_split" : "interleaved";
}

RopePairing rope_pairing_from_string(std::string_view text) {
    if (text == "half_split") return RopePairing::half_split;
    if (text == "interleaved") return RopePairing::interleaved;
    throw InputError("unknown RoPE pairing '" + std::string(text) +
                     "' (expected half_split or interleaved)");
}

nlohmann::json config_to_json(const ModelConfig& c) {
    return {
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
}

ModelConfig config_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InputError("model config must be a JSON object");
    ModelConfig c;
    try {
        c.name = j.value("name", std::string("custom"));
        c.vocab_size = j.at("vocab_size").get<int>();
        c.hidden_size = j.at("hidden_size").get<int>();
        c.n_layers = j.at("n_layers").get<int>();
        c.n_heads = j.at("n_heads").get<int>();
        c.n_kv_heads = j.at("n_kv_heads").get<int>();
        c.head_dim = j.at("head_dim").get<int>();
        c.ffn_size = j.at("ffn_size").get<int>();
        c.rope_theta = j.value("rope_theta", 10000.0);
        c.rms_norm_eps = j.value("rms_norm_eps", 1e-6);
        c.rope_pairing = rope_pairing_from_string(j.value("rope_pairing", std::string("half_split")));
        c.tie_embeddings = j.value("tie_embeddings", true);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(std::string("model config: ") + e.what());
    }
    require_valid(c);
    return c;
}

}  // namespace anatomy
