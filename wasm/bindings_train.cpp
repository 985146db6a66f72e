// Training in wasm: the module the page's training widget loads in a Web Worker
// (attention_train). Every method answers JSON, or {"error": "..."} for bad input.
//
//   trainingBits('{"seed": 5, "steps": 100}')  -> train_steps.hpp's training_bits
//   new TrainingSession()
//     .start(text, '{"seed", "steps", "context", "batch", "lr", "warmup",
//                    "repeat_fraction", "hidden_size"}')
//        -> {vocab_size, characters, train_characters, heldout_characters, parameters}
//        a character vocabulary from `text`, weights from the seed (train/trainer.hpp)
//     .step(n)           -> {steps_done, losses: [n], norms: [n]}   n more steps
//     .heldoutLoss()     -> {steps_done, heldout_loss}
//     .headPatterns(R)   -> trainer.hpp's trained_head_patterns, the induction string R
//                           characters long (0: the longest that fits, as attn train records)
//     .attention(text)   -> {labels: [T], probs: [L][Hq][T][T]} for BOS + text
//   The same seed and text give the same bits as `attn train` (tests/wasm/train.test.mjs).
#include <emscripten/bind.h>

#include <memory>

#include "json_args.hpp"
#include "lessons/head_patterns.hpp"
#include "tokenizer/character_vocabulary.hpp"
#include "train/train_steps.hpp"
#include "train/trainer.hpp"
#include "verify/backend.hpp"

namespace anatomy::wasm {
namespace {

std::string training_bits_json(const std::string& options_json) {
    return json_or_error([&] {
        const json options = parse_options(options_json, {"seed", "steps"});
        const int steps = int_option(options, "steps", 100);
        if (steps < 1 || steps > 100000) throw InputError("steps must be 1 to 100000");
        return training_bits(seed_option(options), steps);
    });
}

class TrainingSession {
public:
    std::string start(const std::string& text, const std::string& options_json) {
        return json_or_error([&] {
            const json o = parse_options(options_json, {"seed", "steps", "context", "batch", "lr", "warmup", "repeat_fraction",
                                                        "hidden_size"});
            TrainingSettings s;
            s.seed = seed_option(o);
            s.steps = int_option(o, "steps", s.steps);
            s.batch.context = std::size_t(std::max(0, int_option(o, "context", int(s.batch.context))));
            s.batch.windows = std::size_t(std::max(0, int_option(o, "batch", int(s.batch.windows))));
            s.batch.repeat_fraction = number_option(o, "repeat_fraction", s.batch.repeat_fraction);
            s.peak_rate = number_option(o, "lr", s.peak_rate);
            s.warmup_steps = int_option(o, "warmup", s.warmup_steps);
            ModelConfig config = tiny_config();
            const int width = int_option(o, "hidden_size", config.hidden_size);
            if (width != 32 && width != 64) throw InputError("hidden_size must be 32 or 64");
            config.hidden_size = width, config.head_dim = width / config.n_heads, config.ffn_size = 3 * width;

            // Built aside and kept only when all of it succeeds: a refused start leaves the last run as it was.
            auto tokenizer = std::make_unique<LlamaTokenizer>(LlamaTokenizer::from_json(character_tokenizer_json(text)));
            TrainingText data = training_text(*tokenizer, text, s.batch.context);
            const std::size_t train = data.train.size(), heldout = data.heldout.size();
            auto trainer = std::make_unique<Trainer>(config, std::move(data), s);
            tokenizer_ = std::move(tokenizer), trainer_ = std::move(trainer);
            std::size_t parameters = 0;
            const ModelWeights<float>& weights = trainer_->model().weights;
            for_each_tensor([&](TensorKind, const auto& tensor) { parameters += tensor.size(); }, weights);
            return json{{"vocab_size", tokenizer_->vocab_size()},
                        {"characters", train + heldout},
                        {"train_characters", train},
                        {"heldout_characters", heldout},
                        {"parameters", parameters}};
        });
    }

    std::string step(int n) {
        return json_or_error([&] {
            const Trainer& t = started();
            if (n < 1 || n > 100000) throw InputError("steps must be 1 to 100000");
            json losses = json::array(), norms = json::array();
            for (int i = 0; i < n; ++i) {
                const StepResult r = trainer_->step();
                losses.push_back(r.loss);
                norms.push_back(r.gradient_norm);
            }
            return json{{"steps_done", t.steps_done()}, {"losses", losses}, {"norms", norms}};
        });
    }

    std::string heldout_loss() {
        return json_or_error([&] {
            const Trainer& t = started();
            return json{{"steps_done", t.steps_done()}, {"heldout_loss", t.heldout_loss()}};
        });
    }

    std::string head_patterns_json(int induction_R) {
        return json_or_error([&] {
            const Trainer& t = started();
            if (induction_R < 0) throw InputError("the induction string's length must not be negative");
            return trained_head_patterns(t.model(), t.text(), t.settings().batch.context, std::size_t(induction_R));
        });
    }

    std::string attention(const std::string& text) {
        return json_or_error([&] {
            const Trainer& t = started();
            const std::vector<std::int32_t> ids = tokenizer_->encode(text, true);
            if (ids.size() > t.settings().batch.context)
                throw InputError("at most " + std::to_string(t.settings().batch.context - 1) + " characters (the training context)");
            TinyBackend backend(t.model());
            json labels = json::array(), layers = json::array();
            for (const std::int32_t id : ids) labels.push_back(id == tokenizer_->bos_id() ? "BOS" : tokenizer_->display(id));
            for (const Tensor4<float>& p : pass_probs(backend, ids)) {  // [1, Hq, T, T]
                json heads = json::array();
                for (std::size_t h = 0; h < p.shape(1); ++h) {
                    json rows = json::array();
                    for (std::size_t q = 0; q < p.shape(2); ++q)
                        rows.push_back(std::vector<float>(&p(0, h, q, 0), &p(0, h, q, 0) + p.shape(3)));
                    heads.push_back(rows);
                }
                layers.push_back(heads);
            }
            return json{{"labels", labels}, {"probs", layers}};
        });
    }

private:
    const Trainer& started() const {
        if (!trainer_) throw InputError("no training run: call start(text, options) first");
        return *trainer_;
    }

    std::unique_ptr<LlamaTokenizer> tokenizer_;
    std::unique_ptr<Trainer> trainer_;
};

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_train) {
    using anatomy::wasm::TrainingSession;
    emscripten::function("trainingBits", &anatomy::wasm::training_bits_json);
    emscripten::class_<TrainingSession>("TrainingSession")
        .constructor<>()
        .function("start", &TrainingSession::start)
        .function("step", &TrainingSession::step)
        .function("heldoutLoss", &TrainingSession::heldout_loss)
        .function("headPatterns", &TrainingSession::head_patterns_json)
        .function("attention", &TrainingSession::attention);
}
