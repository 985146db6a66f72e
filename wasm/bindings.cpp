// The explorer's forward pass for chapter 1's module (attention_core): an object in
// (options_from_js: this module carries no JSON parser), a JSON string out, and no
// throw into JavaScript: a failure comes back as {"error": "message"}. Only
// conversion between JSON and core types lives here; the model logic is the core's.
//
//   forward(options)           {tokens: [[ids], ...] (B equal rows), or ids: [...] with batch: B
//                               (rows as `attn verify --batch B` builds them), seed: 1,
//                               capture: false | true | ["probabilities", "v", ...] (only those fields),
//                               rope_pairing: "half_split" | "interleaved" (default: the model's)}
//                              -> {tokens, logits [B, T, V]} and, with capture, positions,
//                                 every layer's intermediates and final_normed
//
// config, cachePayload and buildInfo are in bindings_config.cpp, shared with the
// notebook's module; the trace, the checks and the checkpoint export are in
// bindings_trace.cpp (attention_trace_viewer, loaded when the trace viewer uses them).
//
// Every model here is the tiny preset with seeded weights, as in `attn verify`.
#include <optional>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <nlohmann/json.hpp>

#include "capture_json.hpp"
#include "nested_json.hpp"
#include "json_args.hpp"
#include "model/forward.hpp"
#include "model/token_batch.hpp"

namespace anatomy::wasm {
namespace {

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

const Options forward_options{"forward", {"tokens", "ids", "batch", "seed", "capture", "rope_pairing"}};
std::string forward(const emscripten::val& options_js) {
    return json_or_error([&] {
        const json options = options_from_js(options_js, forward_options);
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

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_core) {
    using namespace anatomy::wasm;
    emscripten::function("forward", &forward);
}
