// The model a training run builds, for `attn train` and the page's trainer alike.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "../model/model_config.hpp"

namespace anatomy {

// The tiny preset with the text's vocabulary (`vocab_size`, one id per character
// and the specials) and `overrides` applied: a JSON object of config.json keys
// (hidden_size, intermediate_size, num_hidden_layers, ...). head_dim follows
// hidden_size / num_attention_heads unless it is given. Each key keeps the kind of
// value the preset gives it ("64" is not a width). Throws InputError naming the key
// and what is wrong: an unknown key, vocab_size (it comes from the text), an untied
// head, a value of the wrong kind, or keys that together make no usable model.
ModelConfig training_config(int vocab_size, const nlohmann::json& overrides);

}  // namespace anatomy
