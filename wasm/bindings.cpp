// The core as an embind module for the page, workers and Node. Every function
// takes a JSON string and returns a JSON string (exportCheckpoint returns
// bytes), and none throws into JavaScript: a failure comes back as
// {"error": "message"}. Only conversion between JSON and core types lives
// here; the model logic is the core's.
//
//   trace(options)             {tokens: [ids] = [1..6], batch: 2, seed: 1}
//                              -> the trace `attn verify --tokens ... --batch B --export-trace` writes
//   verify(options)            same options -> {checks: [...], all_passed}
//   forward(options)           {tokens: [[ids], ...] (B equal rows), seed: 1, capture: false}
//                              -> {tokens, logits [B, T, V]} and, with capture, positions,
//                                 every layer's intermediates and final_normed
//   exportCheckpoint(options)  {seed: 1} -> Uint8Array: model.safetensors (float32), the bytes
//                              `attn export-checkpoint` writes; on failure {error} (an object)
//   config(name)               "tiny" | "tinyllama-1.1b" -> config JSON
//   cachePayload(config)       config JSON -> KV-cache bytes per token
//   buildInfo()                -> {project_version, compiler, platform: "wasm"}
//
// Every model here is the tiny preset with seeded weights, as in `attn verify`.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <nlohmann/json.hpp>

#include "build_info.hpp"
#include "cache_payload.hpp"
#include "checkpoint/hf_llama.hpp"
#include "checks.hpp"
#include "forward.hpp"
#include "token_batch.hpp"
#include "trace.hpp"

namespace anatomy::wasm {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- JSON in

// Parses `text` as a JSON object and rejects keys outside `known`, so a typo
// ("tokns") is an error rather than a silent default.
json parse_options(const std::string& text, std::initializer_list<const char*> known) {
    json options;
    try {
        options = json::parse(text.empty() ? std::string("{}") : text);
    } catch (const json::parse_error& e) {
        throw InputError(std::string("options are not valid JSON: ") + e.what());
    }
    if (!options.is_object()) throw InputError("options must be a JSON object, got " + options.dump());
    for (const auto& item : options.items()) {
        bool found = false;
        std::string expected;
        for (const char* key : known) {
            found = found || item.key() == key;
            expected += (expected.empty() ? "" : ", ") + std::string(key);
        }
        if (!found) throw InputError("unknown option '" + item.key() + "' (expected " + expected + ")");
    }
    return options;
}

std::uint64_t seed_option(const json& options) {
    if (!options.contains("seed")) return default_seed;
    const json& seed = options["seed"];
    if (!seed.is_number_unsigned()) throw InputError("seed must be a non-negative integer, got " + seed.dump());
    return seed.get<std::uint64_t>();
}

// True when `value` is an integer that fits an int32 (JSON keeps large unsigned values apart).
bool is_int32(const json& value) {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int32_t>::max());
    return value.is_number_integer() && value.get<std::int64_t>() >= std::numeric_limits<std::int32_t>::min() &&
           value.get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max();
}

int int_option(const json& options, const char* key, int fallback) {
    if (!options.contains(key)) return fallback;
    if (!is_int32(options[key])) throw InputError(std::string(key) + " must be an integer, got " + options[key].dump());
    return options[key].get<int>();
}

bool bool_option(const json& options, const char* key, bool fallback) {
    if (!options.contains(key)) return fallback;
    if (!options[key].is_boolean()) throw InputError(std::string(key) + " must be true or false, got " + options[key].dump());
    return options[key].get<bool>();
}

// One id as int32. Range against the vocabulary is the core's check (make_batch,
// embed); here only what does not fit an int32 at all is stopped.
std::int32_t token_id(const json& value, int vocab_size) {
    if (!value.is_number_integer()) throw InputError("token ids must be integers, got " + value.dump());
    if (!is_int32(value))
        throw InputError("token id " + value.dump() + " is outside the vocabulary [0, " +
                         std::to_string(vocab_size - 1) + "]");
    return value.get<std::int32_t>();
}

// [ids] -> [T]
std::vector<std::int32_t> token_list(const json& value, int vocab_size) {
    if (!value.is_array()) throw InputError("tokens must be a list of token ids, got " + value.dump());
    std::vector<std::int32_t> ids;
    for (const json& id : value) ids.push_back(token_id(id, vocab_size));
    return ids;
}

// [[ids], ...] -> [B, T]
TokenIds token_rows(const json& value, int vocab_size) {
    if (!value.is_array() || value.empty() || !value[0].is_array())
        throw InputError("tokens must be a non-empty list of rows of token ids, e.g. [[1, 2, 3]], got " + value.dump());
    const std::size_t B = value.size(), T = value[0].size();
    TokenIds tokens({B, T});
    for (std::size_t b = 0; b < B; ++b) {
        const std::vector<std::int32_t> row = token_list(value[b], vocab_size);
        if (row.size() != T)
            throw InputError("tokens row " + std::to_string(b) + " has " + std::to_string(row.size()) +
                             " ids but row 0 has " + std::to_string(T) + "; every row must be as long");
        for (std::size_t t = 0; t < T; ++t) tokens(b, t) = row[t];
    }
    return tokens;
}

// The model and batch `attn verify` would build from the same options.
struct SeededBatch {
    std::uint64_t seed;
    Model<float> model;
    TokenIds tokens;  // [B, T]
};

SeededBatch seeded_batch(const json& options) {
    const std::uint64_t seed = seed_option(options);
    Model<float> model = random_model(tiny_config(), seed);
    const std::vector<std::int32_t> ids =
        options.contains("tokens") ? token_list(options["tokens"], model.config.vocab_size)
                                   : std::vector<std::int32_t>{1, 2, 3, 4, 5, 6};  // the CLI's --tokens default
    const int batch = int_option(options, "batch", 2);                             // the CLI's --batch default
    TokenIds tokens = make_batch(ids, batch, model.config.vocab_size);
    return {seed, std::move(model), std::move(tokens)};
}

// ---------------------------------------------------------------- JSON out

// Runs `body` and returns its JSON as text, or {"error": message} if it throws.
template <typename Body>
std::string json_or_error(Body body) {
    try {
        return body().dump();
    } catch (const std::exception& e) {
        // replace: a message quoting the caller's bytes must not fail to serialise.
        return json{{"error", e.what()}}.dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (...) {
        return json{{"error", "unknown error in the wasm core"}}.dump();
    }
}

// Everything one layer computed, named as in LayerCapture (probs -> probabilities, as in the trace).
json layer_to_json(const LayerCapture<float>& layer) {
    return {
        {"input", to_nested_json(layer.input)},                        // [B, T, D] residual stream in
        {"normed_input", to_nested_json(layer.normed_input)},          // [B, T, D]
        {"q", to_nested_json(layer.q)},                                // [B, Hq, T, dh] before RoPE
        {"k", to_nested_json(layer.k)},                                // [B, Hkv, T, dh]
        {"v", to_nested_json(layer.v)},                                // [B, Hkv, T, dh]
        {"q_rope", to_nested_json(layer.q_rope)},                      // [B, Hq, T, dh] after RoPE
        {"k_rope", to_nested_json(layer.k_rope)},                      // [B, Hkv, T, dh]
        {"scores", to_nested_json(layer.scores)},                      // [B, Hq, T, S] before the mask
        {"probabilities", to_nested_json(layer.probs)},                // [B, Hq, T, S]
        {"head_outputs", to_nested_json(layer.head_outputs)},          // [B, Hq, T, dh]
        {"attention_update", to_nested_json(layer.attention_update)},  // [B, T, D]
        {"after_attention", to_nested_json(layer.after_attention)},    // [B, T, D] residual stream mid-layer
        {"ffn_output", to_nested_json(layer.ffn_output)},              // [B, T, D]
        {"output", to_nested_json(layer.output)},                      // [B, T, D] residual stream out
    };
}

// ---------------------------------------------------------------- exported functions

std::string trace(const std::string& options_json) {
    return json_or_error([&] {
        const SeededBatch run = seeded_batch(parse_options(options_json, {"tokens", "batch", "seed"}));
        const std::vector<CheckRecord> checks = run_checks(run.model, run.tokens);
        return make_trace(run.model, {{"source", "seed"}, {"seed", run.seed}}, run.tokens, checks, build_info());
    });
}

std::string verify(const std::string& options_json) {
    return json_or_error([&] {
        const SeededBatch run = seeded_batch(parse_options(options_json, {"tokens", "batch", "seed"}));
        const std::vector<CheckRecord> checks = run_checks(run.model, run.tokens);
        json records = json::array();
        for (const CheckRecord& check : checks) records.push_back(check_to_json(check));
        return json{{"checks", records}, {"all_passed", all_passed(checks)}};
    });
}

std::string forward(const std::string& options_json) {
    return json_or_error([&] {
        const json options = parse_options(options_json, {"tokens", "seed", "capture"});
        const Model<float> model = random_model(tiny_config(), seed_option(options));
        if (!options.contains("tokens")) throw InputError("forward needs tokens, e.g. {\"tokens\": [[1, 2, 3]]}");
        const TokenIds tokens = token_rows(options["tokens"], model.config.vocab_size);  // [B, T]
        const bool capture = bool_option(options, "capture", false);

        ForwardCapture<float> captured;
        const Tensor3<float> logits = full_forward(model, tokens, AttentionPath::grouped, capture ? &captured : nullptr);
        json out = {{"tokens", to_nested_json(tokens)}, {"logits", to_nested_json(logits)}};  // logits: [B, T, V]
        if (capture) {
            json layers = json::array();
            for (const LayerCapture<float>& layer : captured.layers) layers.push_back(layer_to_json(layer));
            out["positions"] = captured.positions;
            out["layers"] = layers;
            out["final_normed"] = to_nested_json(captured.final_normed);  // [B, T, D]
        }
        return out;
    });
}

emscripten::val export_checkpoint(const std::string& options_json) {
    try {
        const json options = parse_options(options_json, {"seed"});
        const std::vector<std::uint8_t> bytes = hf_safetensors(random_model(tiny_config(), seed_option(options)), DType::f32);
        // A typed_memory_view looks into the wasm heap, which `bytes` leaves on return
        // (and which moves when memory grows): copy it into an array JavaScript owns.
        emscripten::val copy = emscripten::val::global("Uint8Array").new_(bytes.size());
        copy.call<void>("set", emscripten::val(emscripten::typed_memory_view(bytes.size(), bytes.data())));
        return copy;
    } catch (const std::exception& e) {
        emscripten::val error = emscripten::val::object();
        error.set("error", std::string(e.what()));
        return error;
    }
}

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

std::string cache_payload_json(const std::string& config_json) {
    return json_or_error([&] {
        json config;
        try {
            config = json::parse(config_json);
        } catch (const json::parse_error& e) {
            throw InputError(std::string("config is not valid JSON: ") + e.what());
        }
        return payload_to_json(cache_payload(config_from_json(config)));
    });
}

std::string build_info_json() {
    return json_or_error([] { return build_info_to_json(build_info()); });
}

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_core) {
    using namespace anatomy::wasm;
    emscripten::function("trace", &trace);
    emscripten::function("verify", &verify);
    emscripten::function("forward", &forward);
    emscripten::function("exportCheckpoint", &export_checkpoint);
    emscripten::function("config", &config);
    emscripten::function("cachePayload", &cache_payload_json);
    emscripten::function("buildInfo", &build_info_json);
}
