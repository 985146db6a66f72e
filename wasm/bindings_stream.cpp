// StreamingLLM's question in the page: a long text decoded one token at a time through
// a KV cache of at most W entries, under each eviction policy, against recomputing
// every prediction from the last W tokens: core/stream/stream_report.hpp, the code
// `attn stream` runs. Part of the notebook's module (attention_notebook.js/.wasm), which
// the StreamingLLM widget's workers and the sink-scores figure load as they come near,
// for the checkpoints attn train wrote; and of the trained-model module
// (attention_trained), which reads llama2.c's files too, for stories260K in the same
// widget (loadLlama2c is there only: ANATOMY_STREAM_LLAMA2C).
//
//   const s = new core.StreamSession();
//   s.loadCheckpoint(config, safetensorsBytes, safetensorsHeader, tokenizer)
//                      a folder attn train wrote (config.json, model.safetensors, tokenizer.json)
//   s.loadLlama2c(modelBytes, tokenizerBytes)
//                      a llama2.c model.bin and tokenizer.bin (stories260K; attention_trained only)
//                      -> both: {config, vocab_size, context, attention_sinks}
//   s.run({text, window, sinks, length, generate, reference})
//                      -> stream_report_json's report (every policy's losses, means, where each
//                         departs from the reference, the continuations) with the text's
//                         token count before `length` cut it, trained_positions, and the time
//                         of the three policies and of the reference (policies_ms,
//                         reference_ms, ms their sum); reference: false leaves the reference
//                         out (it costs about W times one policy)
//   s.addReference()   -> the last run's report with the reference added
//   s.tokens(options)  -> {tokens, text_tokens}: how many tokens a run on run's options decodes
//   s.referenceLosses({...options, from, to}) -> {from, losses, ms}: part of the reference
//                         (predictions from .. to-1) for run's options; needs no run first
//   s.referenceContinuation(options) -> {ids, ms}: the rest of it
//   s.attachReference({losses, continuation, ms}) -> the last run's report with a reference
//                         joined from those parts (the page's workers share them out)
//   s.check(options)   -> {} when run takes these options, else {error, option}: the option the
//                         core refuses and its words (needs no model)
//   s.headScores({text}) -> {tokens, queries_from, first_token: {heads [L][Hq], uniform_baseline},
//                         learned_sink: {heads} or null}: one pass over BOS and the text, the
//                         notebook's sink-scores figure
//   s.delete()
// Options are objects (this module links no JSON parser); every method answers JSON
// text, or {"error"}.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "json_args.hpp"
#include "lessons/head_patterns.hpp"
#include "page_checkpoint.hpp"
#include "stream/stream_report.hpp"
#include "verify/backend.hpp"

namespace anatomy::wasm {
namespace {

// The most tokens a run decodes: 4 policies of 20,000 tokens take seconds, and a page
// must not freeze for longer.
constexpr int longest_stream = 20000;

const Options stream_run_options{"StreamSession.run", {"text", "window", "sinks", "length", "generate", "reference"}};
const Options stream_tokens_options{"StreamSession.tokens", {"text", "window", "sinks", "length", "generate"}};
const Options stream_reference_losses_options{"StreamSession.referenceLosses", {"text", "window", "sinks", "length", "generate", "from", "to"}};
const Options stream_continuation_options{"StreamSession.referenceContinuation", {"text", "window", "sinks", "length", "generate"}};
const Options stream_attach_reference_options{"StreamSession.attachReference", {"losses", "continuation", "ms"}};
const Options stream_head_scores_options{"StreamSession.headScores", {"text"}};
const Options stream_check_options{"StreamSession.check", {"text", "window", "sinks", "length", "generate"}};
class StreamSession {
public:
    std::string load_checkpoint(const emscripten::val& config, const emscripten::val& safetensors,
                                const emscripten::val& header, const emscripten::val& tokenizer) {
        return json_or_error([&] { return loaded(checkpoint_from_page(config, safetensors, header, tokenizer)); });
    }

    std::string load_llama2c(const emscripten::val& model_bytes, const emscripten::val& tokenizer_bytes) {
        return json_or_error([&] { return loaded(llama2c_from_page(model_bytes, tokenizer_bytes)); });
    }

    std::string run(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, stream_run_options);
            const int window = window_option(options), sinks = sinks_option(options, window);
            const int generate = generate_option(options);
            last_.reset();
            const TextIds& text = text_ids(options);
            const auto started = std::chrono::steady_clock::now();
            StreamReport report = stream_report(checkpoint_->model, text.ids, std::size_t(window), std::size_t(sinks),
                                                std::size_t(generate), false);
            last_ = std::make_unique<LastRun>(LastRun{text.ids, std::move(report), std::size_t(generate), text.text_tokens, since(started), 0});
            if (bool_option(options, "reference", true)) add_reference_now();
            return report_json();
        });
    }

    // How many tokens a run on this text decodes (its first `length`), and how many it has.
    std::string tokens(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, stream_tokens_options);
            sinks_option(options, window_option(options));
            const TextIds& text = text_ids(options);
            return json{{"tokens", text.ids.size()}, {"text_tokens", text.text_tokens}};
        });
    }

    // Part of the reference for a text: the losses of predictions from .. to-1 of its first
    // `length` tokens. Parts computed apart (the page shares them out among its workers)
    // join, in order, into the whole reference, which attachReference adds to a run.
    std::string reference_losses(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, stream_reference_losses_options);
            const int window = window_option(options), from = int_option(options, "from", 0), to = int_option(options, "to", 0);
            sinks_option(options, window);
            if (from < 0 || to < from) throw InputError("predictions from .. to, with 0 <= from <= to");
            const TextIds& text = text_ids(options);
            const auto started = std::chrono::steady_clock::now();
            json out = {{"from", from},
                        {"losses", recomputed_losses(checkpoint_->model, text.ids, std::size_t(window), std::size_t(from), std::size_t(to))}};
            out["ms"] = since(started);
            return out;
        });
    }

    // The reference's continuation of a text: `generate` greedy tokens, each from a pass
    // over the last W tokens read.
    std::string reference_continuation(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, stream_continuation_options);
            const int window = window_option(options), generate = generate_option(options);
            sinks_option(options, window);
            const TextIds& text = text_ids(options);
            const auto started = std::chrono::steady_clock::now();
            json out = {{"ids", recomputed_continuation(checkpoint_->model, text.ids, std::size_t(window), std::size_t(generate))}};
            out["ms"] = since(started);
            return out;
        });
    }

    // The last run(..., reference: false) completed with a reference computed in parts:
    // {losses (every prediction's, in order), continuation (ids), ms (the parts' time, for
    // the report)}.
    std::string attach_reference(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, stream_attach_reference_options);
            if (!last_) throw InputError("no run to complete: call run first");
            StreamRun reference{number_list(options.value("losses", json::array()), "losses"),
                                token_list(options.value("continuation", json::array()), checkpoint_->model.config.vocab_size)};
            anatomy::add_reference(last_->report, std::move(reference));
            last_->reference_ms = number_option(options, "ms", 0);
            return report_json();
        });
    }

    // The notebook's sink scores: one pass over BOS and `text` (at most the trained
    // positions), each head's first-token score and, with learned sink logits, its share to
    // the sink, both over the second half of the queries (lessons/head_patterns.hpp).
    std::string head_scores(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, stream_head_scores_options);
            if (!checkpoint_) throw InputError("no model: call loadCheckpoint or loadLlama2c first");
            const std::vector<std::int32_t> ids = checkpoint_->tokenizer.encode(string_option(options, "text", ""), true);
            if (ids.size() < 4) throw InputError("give at least 3 tokens after BOS");
            if (ids.size() > std::size_t(checkpoint_->context))
                throw InputError("at most " + std::to_string(checkpoint_->context - 1) + " tokens after BOS: the model was trained on " +
                                 std::to_string(checkpoint_->context) + " positions");
            TinyBackend backend(checkpoint_->model);
            const std::vector<Tensor4<float>> probs = pass_probs(backend, ids);
            const PatternScores first = first_token_scores(probs);
            json out = {{"tokens", ids.size()},
                        {"queries_from", ids.size() / 2},
                        {"first_token", {{"heads", first.heads}, {"uniform_baseline", first.uniform_baseline}}},
                        {"learned_sink", nullptr}};
            if (checkpoint_->model.config.attention_sinks) out["learned_sink"] = {{"heads", learned_sink_shares(probs).heads}};
            return out;
        });
    }

    // {} when run() takes these options, else {error, option}: the first option the core
    // refuses (window, sinks, length or generate) and its words, checked before any text is
    // read, so that the page can name the input that is wrong; needs no model.
    std::string check(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, stream_check_options);
            const char* option = "window";
            try {
                const int window = window_option(options);
                option = "sinks";
                sinks_option(options, window);
                option = "length";
                length_option(options);
                option = "generate";
                generate_option(options);
            } catch (const InputError& e) {
                return json{{"error", e.what()}, {"option", option}};
            }
            return json::object();
        });
    }

    // The reference for the last run(..., reference: false), and the report complete.
    std::string add_reference() {
        return json_or_error([&] {
            if (!last_) throw InputError("no run to complete: call run first");
            if (!has_reference(last_->report)) add_reference_now();
            return report_json();
        });
    }

private:
    struct LastRun {
        std::vector<std::int32_t> ids;
        StreamReport report;
        std::size_t generate = 0, text_tokens = 0;
        double policies_ms = 0, reference_ms = 0;
    };

    static double since(std::chrono::steady_clock::time_point started) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    }

    // The text's first `length` tokens (BOS first), and how many the whole text gives; the
    // last text read is kept, since a run and the reference's parts ask for the same one.
    struct TextIds {
        std::string text;
        int length = 0;
        std::vector<std::int32_t> ids;
        std::size_t text_tokens = 0;
    };

    const TextIds& text_ids(const json& options) {
        if (!checkpoint_) throw InputError("no model: call loadCheckpoint or loadLlama2c first");
        const int length = length_option(options);
        std::string text = string_option(options, "text", "");
        if (text != text_.text || length != text_.length) {
            std::vector<std::int32_t> ids = checkpoint_->tokenizer.encode(text, true);
            const std::size_t text_tokens = ids.size();
            if (ids.size() > std::size_t(length)) ids.resize(std::size_t(length));
            text_ = TextIds{std::move(text), length, std::move(ids), text_tokens};
        }
        return text_;
    }

    static int window_option(const json& options) {
        const int window = int_option(options, "window", 64);
        if (window < 1) throw InputError("the window holds at least 1 entry");
        return window;
    }

    // K, held to the core's rule for the sinks and the window (model/kv_eviction.hpp).
    static int sinks_option(const json& options, int window) {
        const int sinks = int_option(options, "sinks", 4);
        if (sinks < 0) throw InputError("the number of sinks cannot be negative");
        require_sinks_inside_window(std::size_t(window), std::size_t(sinks));
        return sinks;
    }

    static int length_option(const json& options) {
        const int length = int_option(options, "length", 2000);
        if (length < 2 || length > longest_stream) throw InputError("decode 2 to " + std::to_string(longest_stream) + " tokens");
        return length;
    }

    static int generate_option(const json& options) {
        const int generate = int_option(options, "generate", 0);
        if (generate < 0 || generate > 1000) throw InputError("generate 0 to 1000 tokens");
        return generate;
    }

    void add_reference_now() {
        const auto started = std::chrono::steady_clock::now();
        anatomy::add_reference(last_->report, checkpoint_->model, last_->ids, last_->generate);
        last_->reference_ms = since(started);
    }

    json report_json() const {
        json out = stream_report_json(last_->report, checkpoint_->tokenizer);
        out["text_tokens"] = last_->text_tokens;
        out["trained_positions"] = checkpoint_->context;
        out["policies_ms"] = last_->policies_ms;
        out["reference_ms"] = last_->reference_ms;
        out["ms"] = last_->policies_ms + last_->reference_ms;
        return out;
    }

    json loaded(PageCheckpoint checkpoint) {
        last_.reset();
        text_ = {};
        checkpoint_ = std::make_unique<PageCheckpoint>(std::move(checkpoint));
        const ModelConfig& c = checkpoint_->model.config;
        return json{{"config", config_to_json(c)},
                    {"vocab_size", c.vocab_size},
                    {"context", checkpoint_->context},
                    {"attention_sinks", c.attention_sinks}};
    }

    std::unique_ptr<PageCheckpoint> checkpoint_;
    std::unique_ptr<LastRun> last_;
    TextIds text_;
};

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_stream) {
    using anatomy::wasm::StreamSession;
    emscripten::class_<StreamSession>("StreamSession")
        .constructor<>()
        .function("loadCheckpoint", &StreamSession::load_checkpoint)
#ifdef ANATOMY_STREAM_LLAMA2C
        // attention_trained's sessions only: the notebook's module leaves llama2.c's reader out.
        .function("loadLlama2c", &StreamSession::load_llama2c)
#endif
        .function("run", &StreamSession::run)
        .function("addReference", &StreamSession::add_reference)
        .function("tokens", &StreamSession::tokens)
        .function("referenceLosses", &StreamSession::reference_losses)
        .function("referenceContinuation", &StreamSession::reference_continuation)
        .function("attachReference", &StreamSession::attach_reference)
        .function("headScores", &StreamSession::head_scores)
        .function("check", &StreamSession::check);
}
