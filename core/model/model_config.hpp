// The hyperparameters of a Llama-style decoder, and the presets we ship.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../ops/rope.hpp"

namespace anatomy {

struct ModelConfig {
    std::string name;
    int vocab_size = 0;
    int hidden_size = 0;   // D, the width of the residual stream
    int n_layers = 0;
    int n_heads = 0;       // Hq, query heads
    int n_kv_heads = 0;    // Hkv, key/value heads; Hq must be a multiple of it
    int head_dim = 0;      // dh, channels per head
    int ffn_size = 0;      // F, width of the SwiGLU expansion
    double rope_theta = 10000.0;
    double rms_norm_eps = 1e-6;
    RopePairing rope_pairing = RopePairing::half_split;
    bool tie_embeddings = true;  // logits = final_norm(x) @ embedding^T
    // Learned attention sinks (gpt-oss): each layer's query head h has a logit that joins
    // its softmax rows as one more column with no value (ops/attention.hpp,
    // softmax_rows_with_sinks). Off: every weight and output as without the field.
    bool attention_sinks = false;

    // Query heads per KV head; query head h reads KV head h / kv_group().
    int kv_group() const { return n_heads / n_kv_heads; }
    // Every weight: the embedding, per layer two norms, the q, k, v, o projections and
    // the three of SwiGLU, the final norm, and lm_head unless it is tied (in double:
    // a config may describe more than memory can hold, and a caller says so).
    double parameter_count() const;
};

// The 2-layer, 32-wide demo model the page explains.
ModelConfig tiny_config();
// The shapes of TinyLlama-1.1B (22 layers, hidden 2048, 32 query heads, 4 KV heads).
ModelConfig tinyllama_config();

// The shapes of llama2.c's TinyStories models: stories260k, stories15m, stories42m,
// stories110m (interleaved RoPE, as llama2.c rotates adjacent pairs). Throws InputError for another name.
ModelConfig llama2c_stories_config(std::string_view name);

std::vector<std::string> preset_names();
// The preset called `name`, or nothing if there is none.
std::optional<ModelConfig> preset_config(std::string_view name);

// Empty when the config describes a model we can run; otherwise what is wrong.
std::string config_problem(const ModelConfig& config);
// Throws InputError with config_problem's message when it is not empty.
void require_valid(const ModelConfig& config);


nlohmann::json config_to_json(const ModelConfig& config);
ModelConfig config_from_json(const nlohmann::json& json);  // throws InputError

}  // namespace anatomy
