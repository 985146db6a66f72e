// --config, as the commands read it. verify and export-checkpoint take a preset's
// name (the weights are generated); train takes config.json keys over the tiny
// preset, as a JSON object or a file holding one.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/model_config.hpp"

namespace anatomy::native {

// The presets' names, for a message or a flag's help: "tiny, tinyllama-1.1b, ...".
std::string preset_names_text();

// The preset --config names; throws InputError naming the presets there are.
ModelConfig preset_option(const std::string& name);

// The keys --config gives: text that starts with '{' or '[' is JSON itself, any other
// text names a file holding it. Throws InputError for JSON that does not parse, a file
// that cannot be read, and text that is neither JSON nor a file's name ("null"),
// saying what --config takes. Whether the value is an object of known keys is the
// caller's to check (training_config).
nlohmann::json config_keys_option(const std::string& text);

}  // namespace anatomy::native
