#include "training_config.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "../checkpoint/hf_llama.hpp"
#include "../json_input.hpp"

namespace anatomy {

ModelConfig training_config(int vocab_size, const nlohmann::json& overrides) {
    ModelConfig tiny = tiny_config();
    tiny.vocab_size = vocab_size;
    nlohmann::json config = hf_config_json(tiny, DType::f32);  // the preset as config.json keys
    config["attention_sinks"] = false;  // a key config.json carries only when true; here, to be overridden
    if (!overrides.is_object()) throw InputError("the overrides must be a JSON object of config.json keys, not " + json_kind(overrides));
    for (const auto& [key, value] : overrides.items()) {
        if (!config.contains(key)) throw InputError("unknown config.json key '" + key + "'");
        if (key == "vocab_size") throw InputError("vocab_size comes from the text's characters");
        if (key == "tie_word_embeddings" && value != true) throw InputError("training needs a tied head");
        const nlohmann::json& preset = config[key];
        if (preset.is_number_integer() && !value.is_number_integer())
            throw InputError(key + " must be a whole number, not " + json_kind(value));
        if (preset.is_number() && !value.is_number()) throw InputError(key + " must be a number, not " + json_kind(value));
        if (preset.is_string() && !value.is_string()) throw InputError(key + " must be a string, not " + json_kind(value));
        if (preset.is_boolean() && !value.is_boolean()) throw InputError(key + " must be true or false, not " + json_kind(value));
    }
    config.merge_patch(overrides);
    if (!overrides.contains("head_dim") && (overrides.contains("hidden_size") || overrides.contains("num_attention_heads")))
        config["head_dim"] = config["hidden_size"].get<std::int64_t>() / std::max<std::int64_t>(1, config["num_attention_heads"].get<std::int64_t>());
    try {
        return config_from_hf_json(config);
    } catch (const InputError& e) {
        throw InputError(json_text(overrides) + ": " + e.what());
    }
}

}  // namespace anatomy
