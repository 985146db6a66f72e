// A trained llama2.c checkpoint in the page (the "trained model" widget): the
// .bin file and its tokenizer.bin, handed over as bytes, run in place by the same
// core as `attn probe --model X.bin --tokenizer Y.bin`. A module of its own
// (attention_trained.js/.wasm), loaded only when the widget is used.
//
//   const s = new core.TrainedSession();
//   s.load(modelBytes, tokenizerBytes)       -> {config, version, seq_len, parameters, bos_id, tokenizer_pieces}
//   s.encode({text: 'Once upon'})            -> {ids (BOS first), token_text}
//   s.decode({ids: [...]})                   -> {text}: the ids as text (BOS dropped, byte pieces joined)
//   s.extend({keep: K, ids: [...]})          -> rewinds the KV cache to its first K tokens, runs `ids`
//                                               through it (one pass, every probability captured):
//                                               {position, history, new_tokens: [{id, text}], next: {id, text,
//                                                probability}, top: [...5], ms}
//   s.rows()                                 -> a Float32Array view into the wasm heap (copy it before the next call):
//                                               the last extend's probabilities, per layer and query head the
//                                               T_new rows, row i holding keys 0 .. history + i (the rest is 0)
//   s.headPatterns({ids: [...]})             -> lessons/head_patterns.hpp's scores as JSON
//   s.probe({ids: [...], generate: N, head_patterns: bool})
//                                            -> the trace `attn probe` writes (without its file and machine fields)
//   s.checks({ids: [...]})                   -> the check suite (a, b, d, e1-e3, f2, g, h2) on this model, on the
//                                               batch `attn verify --batch 2` makes of the ids
//   s.delete()                               (embind objects are freed by hand)
// Options are objects (json_from_js: this module links no JSON parser). Every method
// returns {error} (JSON; load: an object) instead of throwing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "checkpoint/llama2c.hpp"
#include "checkpoint/llama_views.hpp"
#include "json_args.hpp"
#include "lessons/head_patterns.hpp"
#include "model/token_batch.hpp"
#include "page_checkpoint.hpp"
#include "pretrained/pretrained_backend.hpp"
#include "pretrained/probe.hpp"
#include "verify/check_suite.hpp"
#include "verify/checks.hpp"

namespace anatomy::wasm {
namespace {

emscripten::val error_object(const std::string& message) {
    emscripten::val error = emscripten::val::object();
    error.set("error", message);
    return error;
}

// The five most likely next tokens after a logits row [V] (probe.hpp's top_next_tokens) as {id, text, probability}.
json top_five(const float* row, std::size_t V, const LlamaTokenizer& tokenizer) {
    json top = json::array();
    for (const TokenChoice& choice : top_next_tokens(row, V, 5))
        top.push_back({{"id", choice.id}, {"text", token_text(tokenizer, choice.id)}, {"probability", choice.probability}});
    return top;
}

}  // namespace

const Options trained_encode_options{"TrainedSession.encode", {"text"}};
const Options trained_decode_options{"TrainedSession.decode", {"ids"}};
const Options trained_extend_options{"TrainedSession.extend", {"keep", "ids"}};
const Options trained_head_patterns_options{"TrainedSession.headPatterns", {"ids"}};
const Options trained_probe_options{"TrainedSession.probe", {"ids", "generate", "head_patterns"}};
const Options trained_checks_options{"TrainedSession.checks", {"ids"}};
class TrainedSession {
public:
    emscripten::val load(const emscripten::val& model_bytes, const emscripten::val& tokenizer_bytes) {
        try {
            backend_.reset();
            model_.reset();
            file_ = heap_copy(model_bytes);
            const Llama2cCheckpoint checkpoint = llama2c_checkpoint(file_.data(), file_.size(), "the model file");
            const std::vector<std::uint8_t> tokenizer_file = heap_copy(tokenizer_bytes);
            tokenizer_ = LlamaTokenizer::from_llama2c(tokenizer_file.data(), tokenizer_file.size(), checkpoint.config.vocab_size,
                                                      "the tokenizer file");
            model_ = std::make_unique<PretrainedModel>(pretrained_from_views(
                llama_views(checkpoint.config, checkpoint.tensors, "the model file"), WeightPrecision::float32));
            backend_ = std::make_unique<PretrainedBackend>(*model_, DType::f32);
            tokens_.clear();
            rows_ = {};
            const ModelConfig& c = model_->config;
            json info = {{"config", config_to_json(c)},
                         {"version", checkpoint.version},
                         {"seq_len", checkpoint.seq_len},
                         {"parameters", model_->parameters},
                         {"file_bytes", file_.size()},
                         {"bos_id", tokenizer_.bos_id()},
                         {"tokenizer_pieces", tokenizer_.vocab_size()}};
            return emscripten::val(info.dump());
        } catch (const std::exception& e) {
            backend_.reset();
            model_.reset();
            return error_object(e.what());
        }
    }

    std::string encode(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, trained_encode_options);
            require_model();
            // BOS, then the text as run.c encodes it (a dummy leading space, then merges).
            const std::vector<std::int32_t> ids = prompt_ids(tokenizer_, string_option(options, "text", ""), false,
                                                             tokenizer_.bos_id(), tokenizer_.eos_id());
            json text = json::array();
            for (std::int32_t id : ids) text.push_back(token_text(tokenizer_, id));
            return json{{"ids", ids}, {"token_text", text}};
        });
    }

    std::string decode(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, trained_decode_options);
            require_model();
            return json{{"text", tokenizer_.decode(token_list(options.value("ids", json::array()), model_->config.vocab_size))}};
        });
    }

    std::string extend(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, trained_extend_options);
            require_model();
            const ModelConfig& c = model_->config;
            const int keep = int_option(options, "keep", 0);
            const std::vector<std::int32_t> ids = token_list(options.value("ids", json::array()), c.vocab_size);
            if (keep < 0 || std::size_t(keep) > tokens_.size())
                throw InputError("keep must be 0 to " + std::to_string(tokens_.size()) + " (the tokens in the cache)");
            if (ids.empty()) throw InputError("extend needs at least one new id");
            if (std::size_t(keep) + ids.size() > max_probe_tokens)
                throw InputError("the page runs at most " + std::to_string(max_probe_tokens) + " tokens; this would make " +
                                 std::to_string(std::size_t(keep) + ids.size()));

            const auto start = std::chrono::steady_clock::now();
            const std::size_t history = std::size_t(keep);
            tokens_.resize(history);
            backend_->rewind(std::int64_t(history));
            TokenIds tokens({1, ids.size()});
            std::copy(ids.begin(), ids.end(), tokens.begin());
            PassCapture capture;
            const Tensor3<float> logits = backend_->forward(tokens, &capture);  // [1, T_new, V]
            tokens_.insert(tokens_.end(), ids.begin(), ids.end());

            // The new rows of every layer's probabilities, each cut after its last visible
            // key (the rest is masked, exactly 0): row i of [L, Hq] block (l, h) holds
            // keys 0 .. history + i, the blocks one after another.
            const std::size_t L = capture.layers.size(), H = std::size_t(c.n_heads), T = ids.size(), S = tokens_.size();
            const std::size_t per_head = T * history + T * (T + 1) / 2;
            rows_.resize(L * H * per_head);
            float* out = rows_.data();
            for (std::size_t l = 0; l < L; ++l) {
                const Tensor4<float>& p = capture.layers[l].probs;  // [1, Hq, T_new, S]
                for (std::size_t h = 0; h < H; ++h)
                    for (std::size_t i = 0; i < T; ++i) out = std::copy_n(&p(0, h, i, 0), history + i + 1, out);
            }
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

            const std::size_t V = std::size_t(c.vocab_size);
            const json top = top_five(logits.data() + (T - 1) * V, V, tokenizer_);
            json new_tokens = json::array();
            for (std::int32_t id : ids) new_tokens.push_back({{"id", id}, {"text", token_text(tokenizer_, id)}});
            return json{{"position", tokens_.size()}, {"history", history}, {"new_tokens", new_tokens},
                        {"rows_shape", {L, H, T, S}}, {"next", top[0]}, {"top", top}, {"ms", ms}};
        });
    }

    // A view of the rows in the wasm heap, valid until the next call into the module
    // (a call may grow the heap and move it): the caller copies it at once. Building
    // a Float32Array here and filling it through embind took 30 ms for 10 MB.
    emscripten::val rows() const { return emscripten::val(emscripten::typed_memory_view(rows_.size(), rows_.data())); }

    std::string head_patterns_json(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, trained_head_patterns_options);
            require_model();
            const std::vector<std::int32_t> ids = token_list(options.value("ids", json::array()), model_->config.vocab_size);
            PretrainedBackend backend(*model_, DType::f32);  // the session's cache stays as it is
            return head_patterns_to_json(head_patterns(backend, ids, tokenizer_.bos_id()));
        });
    }

    std::string probe(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, trained_probe_options);
            require_model();
            ProbeRequest request;
            request.ids = token_list(options.value("ids", json::array()), model_->config.vocab_size);
            request.generate = int_option(options, "generate", 0);
            request.stop_ids = {tokenizer_.bos_id()};  // run.c ends a story at BOS, as the native probe does
            request.bos_id = tokenizer_.bos_id();
            request.head_patterns = bool_option(options, "head_patterns", false);
            PretrainedBackend backend(*model_, DType::f32);
            return probe_result_to_json(run_probe(*model_, tokenizer_, request, backend));
        });
    }

    std::string checks(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, trained_checks_options);
            require_model();
            const std::vector<std::int32_t> ids = token_list(options.value("ids", json::array()), model_->config.vocab_size);
            PretrainedBackend backend(*model_, DType::f32);
            json records = json::array();
            // The batch `attn verify --checkpoint` runs: the ids and a shifted copy (model/token_batch.hpp).
            const std::vector<CheckRecord> suite = run_check_suite(backend, make_batch(ids, 2, model_->config.vocab_size));
            for (const CheckRecord& r : suite) records.push_back(check_to_json(r));
            return json{{"checks", records}, {"all_passed", all_passed(suite)}};
        });
    }

private:
    void require_model() const {
        if (!backend_) throw InputError("no model is loaded: call load(modelBytes, tokenizerBytes) first");
    }

    std::vector<std::uint8_t> file_;  // the .bin bytes the model's views point into
    LlamaTokenizer tokenizer_;
    std::unique_ptr<PretrainedModel> model_;
    std::unique_ptr<PretrainedBackend> backend_;
    std::vector<std::int32_t> tokens_;  // what the backend's cache holds
    std::vector<float> rows_;           // the last extend's rows, packed (see rows())
};

EMSCRIPTEN_BINDINGS(anatomy_trained) {
    emscripten::class_<TrainedSession>("TrainedSession")
        .constructor<>()
        .function("load", &TrainedSession::load)
        .function("encode", &TrainedSession::encode)
        .function("decode", &TrainedSession::decode)
        .function("extend", &TrainedSession::extend)
        .function("rows", &TrainedSession::rows)
        .function("headPatterns", &TrainedSession::head_patterns_json)
        .function("probe", &TrainedSession::probe)
        .function("checks", &TrainedSession::checks);
}

}  // namespace anatomy::wasm
