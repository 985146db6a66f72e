// Training in wasm: the module the page's training widget loads in a Web Worker
// (attention_train). Every method answers JSON, or {"error": "..."} for bad input.
//
//   trainingBits('{"seed": 5, "steps": 100}')  -> train_steps.hpp's training_bits
//   new TrainingSession()
//     .start(text, '{"seed", "steps", "context", "batch", "lr", "warmup",
//                    "repeat_fraction", "hidden_size"}')
//        -> {vocab_size, characters, train_characters, heldout_characters, parameters,
//            shards: how many shards each step's batch is cut into}
//        a character vocabulary from `text`, weights from the seed (train/trainer.hpp)
//     .step(n)           -> {steps_done, losses: [n], norms: [n]}   n more steps
//     .heldoutLoss()     -> {steps_done, heldout_loss}
//     .headPatterns(R)   -> trainer.hpp's trained_head_patterns, the induction string R
//                           characters long (0: the longest that fits, as attn train records)
//     .attention(text)   -> {labels: [T], probs: [L][Hq][T][T]} for BOS + text
//   A step in parts, shared between workers that each hold a session started alike
//   (Trainer::begin_step, shard, end_step; the page's helpers, live-training-worker.ts):
//     .beginStep()                 -> {shards}            draws the next batch
//     .computeShard(s)             -> {loss}              shard s, kept for endStep
//     .shardGradients(s)           -> Float32Array        a kept shard's gradient, every weight
//                                                         in weights.hpp's order (a copy)
//     .receiveShard(s, loss, grad) -> {}                  shard s as another worker computed it
//     .endStep()                   -> {steps_done, loss, norm}   with every shard of the batch
//   The same seed and text give the same bits as `attn train` (tests/wasm/train.test.mjs).
#include <emscripten/bind.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "capture_json.hpp"
#include "json_args.hpp"
#include "lessons/head_patterns.hpp"
#include "tokenizer/character_vocabulary.hpp"
#include "train/train_steps.hpp"
#include "train/trainer.hpp"
#include "train/training_config.hpp"
#include "verify/backend.hpp"

namespace anatomy::wasm {
namespace {

const Options training_bits_options{"trainingBits", {"seed", "steps"}};
std::string training_bits_json(const std::string& options_json) {
    return json_or_error([&] {
        const json options = parse_options(options_json, training_bits_options);
        const int steps = int_option(options, "steps", 100);
        if (steps < 1 || steps > 100000) throw InputError("steps must be 1 to 100000");
        return training_bits(seed_option(options), steps);
    });
}

const Options training_start_options{"TrainingSession.start", {"seed", "steps", "context", "batch", "lr", "warmup", "repeat_fraction", "hidden_size"}};
class TrainingSession {
public:
    std::string start(const std::string& text, const std::string& options_json) {
        return json_or_error([&] {
            const json o = parse_options(options_json, training_start_options);
            TrainingSettings s;
            s.seed = seed_option(o);
            s.steps = int_option(o, "steps", s.steps);
            s.batch.context = std::size_t(std::max(0, int_option(o, "context", int(s.batch.context))));
            s.batch.windows = std::size_t(std::max(0, int_option(o, "batch", int(s.batch.windows))));
            s.batch.repeat_fraction = number_option(o, "repeat_fraction", s.batch.repeat_fraction);
            s.peak_rate = number_option(o, "lr", s.peak_rate);
            s.warmup_steps = int_option(o, "warmup", s.warmup_steps);
            // The page offers two widths, each with a SwiGLU three times as wide.
            const int width = int_option(o, "hidden_size", 32);
            if (width != 32 && width != 64) throw InputError("hidden_size must be 32 or 64");

            // Built aside and kept only when all of it succeeds: a refused start leaves the last run as it was.
            auto tokenizer = std::make_unique<LlamaTokenizer>(LlamaTokenizer::from_json(character_tokenizer_json(text)));
            const ModelConfig config = training_config(int(tokenizer->vocab_size()),
                                                        {{"hidden_size", width}, {"intermediate_size", 3 * width}});
            TrainingText data = training_text(*tokenizer, text, s.batch.context);
            const std::size_t train = data.train.size(), heldout = data.heldout.size();
            auto trainer = std::make_unique<Trainer>(config, std::move(data), s);
            tokenizer_ = std::move(tokenizer), trainer_ = std::move(trainer);
            shards_.clear();
            return json{{"vocab_size", tokenizer_->vocab_size()},
                        {"characters", train + heldout},
                        {"train_characters", train},
                        {"heldout_characters", heldout},
                        {"parameters", parameters()},
                        {"shards", shard_count(s.batch.windows)}};
        });
    }

    std::string step(int n) {
        return json_or_error([&] {
            const Trainer& t = started();
            if (n < 1 || n > 100000) throw InputError("steps must be 1 to 100000");
            if (!shards_.empty()) throw InputError("a step is begun in parts: end it with endStep() first");
            json losses = json::array(), norms = json::array();
            for (int i = 0; i < n; ++i) {
                const StepResult r = trainer_->step();
                losses.push_back(r.loss);
                norms.push_back(r.gradient_norm);
            }
            return json{{"steps_done", t.steps_done()}, {"losses", losses}, {"norms", norms}};
        });
    }

    std::string begin_step() {
        return json_or_error([&] {
            started();
            shards_.assign(trainer_->begin_step(), std::nullopt);
            return json{{"shards", shards_.size()}};
        });
    }

    std::string compute_shard(int s) {
        return json_or_error([&] {
            started();
            std::optional<ShardGradients>& shard = slot(s);
            shard = trainer_->shard(std::size_t(s));
            return json{{"loss", shard->loss}};
        });
    }

    emscripten::val shard_gradients(int s) {
        try {
            started();
            const ModelWeights<float>& gradients = kept(s).gradients;
            std::size_t at = 0;
            emscripten::val out = emscripten::val::global("Float32Array").new_(parameters());
            for_each_tensor(
                [&](TensorKind, const auto& tensor) {
                    out.call<void>("set", emscripten::val(emscripten::typed_memory_view(tensor.size(), tensor.data())), at);
                    at += tensor.size();
                },
                gradients);
            return out;
        } catch (const InputError& error) {
            return emscripten::val(json{{"error", error.what()}}.dump());
        }
    }

    std::string receive_shard(int s, double loss, const emscripten::val& gradients) {
        return json_or_error([&] {
            started();
            const std::vector<float> flat = emscripten::convertJSArrayToNumberVector<float>(gradients);
            if (flat.size() != parameters())
                throw InputError("a shard's gradient has " + std::to_string(parameters()) + " numbers, not " + std::to_string(flat.size()));
            ShardGradients shard{loss, trainer_->model().weights};
            std::size_t at = 0;
            for_each_tensor(
                [&](TensorKind, auto& tensor) {
                    std::copy(flat.begin() + std::ptrdiff_t(at), flat.begin() + std::ptrdiff_t(at + tensor.size()), tensor.begin());
                    at += tensor.size();
                },
                shard.gradients);
            slot(s) = std::move(shard);
            return json::object();
        });
    }

    std::string end_step() {
        return json_or_error([&] {
            const Trainer& t = started();
            std::vector<ShardGradients> shards;
            for (std::size_t s = 0; s < shards_.size(); ++s) shards.push_back(std::move(kept(int(s))));
            if (shards.empty()) throw InputError("no step begun: call beginStep() first");
            const StepResult r = trainer_->end_step(shards);
            shards_.clear();
            return json{{"steps_done", t.steps_done()}, {"loss", r.loss}, {"norm", r.gradient_norm}};
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
            json layers = json::array();
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
            return json{{"labels", token_labels(*tokenizer_, ids)}, {"probs", layers}};
        });
    }

private:
    const Trainer& started() const {
        if (!trainer_) throw InputError("no training run: call start(text, options) first");
        return *trainer_;
    }

    // Shard s of the step begun: empty until computed or received.
    std::optional<ShardGradients>& slot(int s) {
        if (shards_.empty()) throw InputError("no step begun: call beginStep() first");
        if (s < 0 || std::size_t(s) >= shards_.size())
            throw InputError("shard " + std::to_string(s) + " is not one of this batch's " + std::to_string(shards_.size()));
        return shards_[std::size_t(s)];
    }
    ShardGradients& kept(int s) {
        std::optional<ShardGradients>& shard = slot(s);
        if (!shard) throw InputError("shard " + std::to_string(s) + " has been neither computed nor received");
        return *shard;
    }

    std::size_t parameters() const {
        std::size_t n = 0;
        for_each_tensor([&](TensorKind, const auto& tensor) { n += tensor.size(); }, trainer_->model().weights);
        return n;
    }

    std::unique_ptr<LlamaTokenizer> tokenizer_;
    std::unique_ptr<Trainer> trainer_;
    std::vector<std::optional<ShardGradients>> shards_;  // [shards] of the step begun
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
        .function("beginStep", &TrainingSession::begin_step)
        .function("computeShard", &TrainingSession::compute_shard)
        .function("shardGradients", &TrainingSession::shard_gradients)
        .function("receiveShard", &TrainingSession::receive_shard)
        .function("endStep", &TrainingSession::end_step)
        .function("heldoutLoss", &TrainingSession::heldout_loss)
        .function("headPatterns", &TrainingSession::head_patterns_json)
        .function("attention", &TrainingSession::attention);
}
