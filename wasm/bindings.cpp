// The core as an embind module for the page, workers and Node. Every function
// takes a JSON string and returns a JSON string (exportCheckpoint returns
// bytes), and none throws into JavaScript: a failure comes back as
// {"error": "message"}. Only conversion between JSON and core types lives
// here; the model logic is the core's.
//
//   trace(options)             {tokens: [ids] = [1..6], batch: 2, seed: 1}
//                              -> the trace `attn verify --tokens ... --batch B --export-trace` writes
//   verify(options)            same options -> {checks: [...], all_passed}
//   forward(options)           {tokens: [[ids], ...] (B equal rows), or ids: [...] with batch: B
//                               (rows as `attn verify --batch B` builds them), seed: 1,
//                               capture: false | true | ["probabilities", "v", ...] (only those fields),
//                               rope_pairing: "half_split" | "interleaved" (default: the model's)}
//                              -> {tokens, logits [B, T, V]} and, with capture, positions,
//                                 every layer's intermediates and final_normed
//   exportCheckpoint(options)  {seed: 1} -> Uint8Array: model.safetensors (float32), the bytes
//                              `attn export-checkpoint` writes; on failure {error} (an object)
//
// config, cachePayload and buildInfo are in bindings_config.cpp, shared with the
// notebook's module.
//
// Every model here is the tiny preset with seeded weights, as in `attn verify`.
#include <algorithm>
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
#include "capture_json.hpp"
#include "checkpoint/hf_llama.hpp"
#include "json_args.hpp"
#include "model/forward.hpp"
#include "model/token_batch.hpp"
#include "verify/checks.hpp"
#include "verify/trace.hpp"

namespace anatomy::wasm {
namespace {

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

// The batch to run: {"tokens": [[...], ...]} as given, or {"ids": [...], "batch": B}
// built as `attn verify --batch B` builds it (make_batch), so a page shows the same rows.
TokenIds forward_tokens(const json& options, int vocab_size) {
    if (options.contains("tokens") == options.contains("ids"))
        throw InputError("forward needs tokens ({\"tokens\": [[1, 2, 3]]}) or ids and a batch ({\"ids\": [1, 2, 3], \"batch\": 2}), not both");
    if (options.contains("tokens")) {
        if (options.contains("batch")) throw InputError("forward: batch goes with ids, not with tokens");
        return token_rows(options["tokens"], vocab_size);
    }
    return make_batch(token_list(options["ids"], vocab_size), int_option(options, "batch", 1), vocab_size);
}

std::string forward(const std::string& options_json) {
    return json_or_error([&] {
        const json options = parse_options(options_json, {"tokens", "ids", "batch", "seed", "capture", "rope_pairing"});
        const Model<float>& seeded = seeded_tiny_model(seed_option(options));
        // The same weights run under the other RoPE pairing: what a convention mismatch does.
        std::optional<Model<float>> repaired;
        if (options.contains("rope_pairing")) {
            repaired = seeded;
            repaired->config.rope_pairing = rope_pairing_from_string(string_option(options, "rope_pairing", ""));
        }
        const Model<float>& model = repaired ? *repaired : seeded;
        const TokenIds tokens = forward_tokens(options, model.config.vocab_size);  // [B, T]
        bool capture = false;
        const std::vector<std::string> fields = capture_fields(options, capture);

        ForwardCapture<float> captured;
        const Tensor3<float> logits = full_forward(model, tokens, AttentionPath::grouped, capture ? &captured : nullptr);
        json out = {{"tokens", to_nested_json(tokens)}, {"logits", to_nested_json(logits)}};  // logits: [B, T, V]
        if (capture) {
            json layers = json::array();
            for (const LayerCapture<float>& layer : captured.layers) layers.push_back(layer_to_json(layer, fields));
            out["positions"] = captured.positions;
            out["layers"] = layers;
            if (fields.empty()) out["final_normed"] = to_nested_json(captured.final_normed);  // [B, T, D]
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

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_core) {
    using namespace anatomy::wasm;
    emscripten::function("trace", &trace);
    emscripten::function("verify", &verify);
    emscripten::function("forward", &forward);
    emscripten::function("exportCheckpoint", &export_checkpoint);
}
