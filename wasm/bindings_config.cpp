// Presets, KV-cache sizes and the build's description, for both page modules: the
// chapters' core (attention_core) and the notebook's (attention_notebook). Every
// function returns JSON text; a failure comes back as {"error": "message"}.
//
//   config(name)               "tiny" | "tinyllama-1.1b" -> config JSON
//   cachePayload(config)       a config (the object config's JSON parses to) -> KV-cache bytes per token
//   buildInfo()                -> {project_version, compiler, platform: "wasm"}
#include <optional>
#include <string>

#include <emscripten/bind.h>
#include <nlohmann/json.hpp>

#include "build_info.hpp"
#include "json_args.hpp"
#include "model/cache_payload.hpp"
#include "model/model_config.hpp"

namespace anatomy::wasm {
namespace {

std::string config(const std::string& name) {
    return json_or_error([&] {
        const std::optional<ModelConfig> preset = preset_config(name);
        if (!preset) {
            std::string known;
            for (const std::string& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
            throw InputError("unknown config '" + name + "' (known: " + known + ")");
        }
        return config_to_json(*preset);
    });
}

std::string cache_payload_json(const emscripten::val& config) {
    return json_or_error([&] { return payload_to_json(cache_payload(config_from_json(json_from_js(config)))); });
}

std::string build_info_json() {
    return json_or_error([] { return build_info_to_json(build_info()); });
}

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_config) {
    using namespace anatomy::wasm;
    emscripten::function("config", &config);
    emscripten::function("cachePayload", &cache_payload_json);
    emscripten::function("buildInfo", &build_info_json);
}
