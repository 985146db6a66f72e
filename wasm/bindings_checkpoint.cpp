// A checkpoint `attn train` wrote (config.json, model.safetensors, tokenizer.json:
// a character vocabulary), opened in the page from its bytes: the explorer's
// "trained on Shakespeare" weights and the sections about what its heads learned.
// Part of the attention_core module (chapter 1's), which carries no JSON parser: the
// page parses the JSON files (web/src/lib/checkpoint-load.mjs) and hands over objects.
// Every method answers JSON text, or {"error"}.
//
//   new CheckpointSession()
//     .load(config, safetensorsBytes (Uint8Array), safetensorsHeader, tokenizer)
//                          config.json, model.safetensors with its header parsed, tokenizer.json
//                          -> {config, vocab_size, parameters, context}
//     .forward(text, {capture})
//                          -> {tokens: [[BOS, ids...]], labels: [T], and with capture
//                              every layer's fields (capture_json.hpp), as attention_core's forward}
//     .headPatterns(text, seed, strings)
//                          -> head_patterns.hpp's scores: BOS + text as the ordinary text, the
//                             induction score the mean over `strings` (1 to 64) strings of
//                             R = min(32, (context - 1) / 2) characters drawn from seeds `seed`
//                             on; and induction_text, the first string written twice
//     .loss(text)          -> {loss, characters}: mean cross-entropy of each character of
//                             text after BOS and the ones before it, nats per character
//     .generate(text, n)   -> {text, ids}: n characters, each the most likely after the ones before
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "capture_json.hpp"
#include "json_args.hpp"
#include "lessons/head_patterns.hpp"
#include "model/backward.hpp"
#include "page_checkpoint.hpp"
#include "pretrained/probe.hpp"
#include "verify/backend.hpp"

namespace anatomy::wasm {
namespace {

const Options checkpoint_forward_options{"CheckpointSession.forward", {"capture"}};
class CheckpointSession {
public:
    std::string load(const emscripten::val& config_js, const emscripten::val& safetensors, const emscripten::val& header,
                     const emscripten::val& tokenizer_js) {
        return json_or_error([&] {
            PageCheckpoint loaded = checkpoint_from_page(config_js, safetensors, header, tokenizer_js);
            const ModelConfig config = loaded.model.config;
            model_ = std::make_unique<Model<float>>(std::move(loaded.model));
            tokenizer_ = std::make_unique<LlamaTokenizer>(std::move(loaded.tokenizer));
            context_ = loaded.context;
            std::size_t parameters = 0;
            for_each_tensor([&](TensorKind, const auto& tensor) { parameters += tensor.size(); }, model_->weights);
            return json{{"config", config_to_json(config)},
                        {"vocab_size", config.vocab_size},
                        {"parameters", parameters},
                        {"context", context_}};
        });
    }

    std::string forward(const std::string& text, const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, checkpoint_forward_options);
            const std::vector<std::int32_t> ids = encode(text);
            bool capture = false;
            const std::vector<std::string> fields = capture_fields(options, capture);
            TokenIds tokens({1, ids.size()});
            std::copy(ids.begin(), ids.end(), tokens.begin());
            ForwardCapture<float> captured;
            full_forward(*model_, tokens, AttentionPath::grouped, capture ? &captured : nullptr);
            json out = {{"tokens", {ids}}, {"labels", token_labels(*tokenizer_, ids)}};
            if (capture) {
                json layers = json::array();
                for (const LayerCapture<float>& layer : captured.layers) layers.push_back(layer_to_json(layer, fields));
                out["layers"] = layers;
            }
            return out;
        });
    }

    std::string head_patterns_json(const std::string& text, int seed, int strings) {
        return json_or_error([&] {
            const std::vector<std::int32_t> ids = encode(text);
            if (seed < 0) throw InputError("the induction string's seed must not be negative");
            if (strings < 1 || strings > 64) throw InputError("the induction score averages 1 to 64 strings");
            const std::size_t R = std::min<std::size_t>(induction_length, std::size_t(std::max(3, context_ - 1)) / 2);
            TinyBackend backend(*model_);
            const HeadPatterns patterns =
                head_patterns(backend, ids, tokenizer_->bos_id(), R, std::uint64_t(seed), tokenizer_->bos_id() + 1,
                              std::size_t(strings));
            json out = head_patterns_to_json(patterns);
            out["induction_text"] = tokenizer_->decode(patterns.induction_ids);  // BOS dropped: the string written twice
            return out;
        });
    }

    std::string loss(const std::string& text) {
        return json_or_error([&] {
            const std::vector<std::int32_t> ids = encode(text);
            if (ids.size() < 2) throw InputError("type at least one character");
            const std::size_t T = ids.size() - 1;
            TokenIds tokens({1, T}), targets({1, T});
            for (std::size_t t = 0; t < T; ++t) tokens(0, t) = ids[t], targets(0, t) = ids[t + 1];
            return json{{"loss", training_loss(*model_, tokens, targets)}, {"characters", T}};
        });
    }

    std::string generate(const std::string& text, int count) {
        return json_or_error([&] {
            std::vector<std::int32_t> ids = encode(text);
            if (count < 1 || std::size_t(count) + ids.size() > std::size_t(context_))
                throw InputError("the text and what follows must fit the " + std::to_string(context_) +
                                 " positions the model was trained on");
            TinyBackend backend(*model_);
            backend.reset(1);
            std::vector<std::int32_t> made;
            TokenIds next({1, ids.size()});
            std::copy(ids.begin(), ids.end(), next.begin());
            for (int i = 0; i < count; ++i) {
                const Tensor3<float> logits = backend.forward(next, nullptr);  // [1, T, V]
                const std::size_t V = logits.shape(2);
                const std::int32_t id = top_next_tokens(&logits(0, logits.shape(1) - 1, 0), V, 1).front().id;
                made.push_back(id);
                next = TokenIds({1, 1});
                next(0, 0) = id;
            }
            return json{{"text", tokenizer_->decode(made)}, {"ids", made}};
        });
    }

private:
    // BOS, then one id per character; throws for text the model cannot read.
    std::vector<std::int32_t> encode(const std::string& text) const {
        if (!model_) throw InputError("no checkpoint: call load(config, safetensors, tokenizer) first");
        std::vector<std::int32_t> ids = tokenizer_->encode(text, true);
        if (ids.empty()) ids.push_back(tokenizer_->bos_id());
        if (ids.size() > std::size_t(context_))
            throw InputError("at most " + std::to_string(context_ - 1) + " characters: the model was trained on " +
                             std::to_string(context_) + " positions");
        return ids;
    }

    std::unique_ptr<Model<float>> model_;
    std::unique_ptr<LlamaTokenizer> tokenizer_;
    int context_ = 0;
};

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_checkpoint) {
    using anatomy::wasm::CheckpointSession;
    emscripten::class_<CheckpointSession>("CheckpointSession")
        .constructor<>()
        .function("load", &CheckpointSession::load)
        .function("forward", &CheckpointSession::forward)
        .function("headPatterns", &CheckpointSession::head_patterns_json)
        .function("loss", &CheckpointSession::loss)
        .function("generate", &CheckpointSession::generate);
}
