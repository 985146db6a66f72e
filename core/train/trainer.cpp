#include "trainer.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "../model/backward.hpp"
#include "../lessons/head_patterns.hpp"
#include "../model/random.hpp"
#include "../verify/backend.hpp"

namespace anatomy {
namespace {

void require_trainable(const ModelConfig& config, const TrainingSettings& s) {
    const BatchShape& b = s.batch;
    if (s.steps < 1) throw InputError("training needs at least 1 step");
    if (b.windows < 1) throw InputError("training needs a batch of at least 1 window");
    if (b.context < 2) throw InputError("training needs a context of at least 2 tokens");
    if (!(b.repeat_fraction >= 0 && b.repeat_fraction <= 1)) throw InputError("the repeat fraction must be in [0, 1]");
    if (!(s.peak_rate > 0 && s.peak_rate < 1)) throw InputError("the learning rate must be in (0, 1)");
    if (s.warmup_steps < 0) throw InputError("warm-up steps cannot be negative");
    if (!config.tie_embeddings) throw InputError("training needs a model whose head is tied to its embedding");
}

}  // namespace

Trainer::Trainer(ModelConfig config, TrainingText text, const TrainingSettings& settings)
    : settings_(settings), text_(std::move(text)), random_(settings.seed + 1) {
    config.vocab_size = text_.vocab_size;
    require_trainable(config, settings_);
    if (text_.train.size() < settings_.batch.context)
        throw InputError("the training part of the text is shorter than one window of " + std::to_string(settings_.batch.context));
    model_ = random_model(config, settings_.seed);
    model_.weights.embedding *= 0.02f;
    state_ = adamw_state(model_);
    schedule_ = LearningRateSchedule{settings_.peak_rate, settings_.warmup_steps, settings_.steps, settings_.final_rate_ratio};
    heldout_ = heldout_windows(text_, settings_.batch.context, settings_.heldout_count);
}

StepResult Trainer::step(const ParallelFor& parallel) {
    begin_step();
    return end_step(every_shard(model_, batch_.tokens, batch_.targets, parallel));
}

std::size_t Trainer::begin_step() {
    batch_ = draw_batch(text_, text_.train, settings_.batch, random_);
    drawn_ = true;
    return shard_count(settings_.batch.windows);
}

ShardGradients Trainer::shard(std::size_t s) const {
    if (!drawn_) throw InputError("no batch drawn: begin_step first");
    return shard_gradients(model_, batch_.tokens, batch_.targets, s);
}

StepResult Trainer::end_step(const std::vector<ShardGradients>& shards) {
    if (!drawn_) throw InputError("no batch drawn: begin_step first");
    const StepResult result = apply_shards(model_, state_, shards, settings_.batch.windows, settings_.adamw, schedule_.at(steps_done_));
    drawn_ = false;
    ++steps_done_;
    return result;
}

double Trainer::heldout_loss() const { return training_loss(model_, heldout_.tokens, heldout_.targets); }

std::size_t trained_induction_length(const TrainingText& text, std::size_t context, std::size_t requested) {
    const std::size_t longest = (context - 1) / 2;
    const std::size_t distinct = std::size_t(std::max(0, text.vocab_size - text.first_id));  // characters to draw from
    if (distinct < 2)
        throw InputError("the text has " + std::to_string(distinct) + " distinct character" + (distinct == 1 ? "" : "s") +
                         ": measuring induction heads needs a string of at least 2 different characters, written twice");
    if (longest < 2)
        throw InputError("a context of " + std::to_string(context) +
                         " cannot hold the induction string twice after BOS (it needs a context of at least 5)");
    if (requested == 1 || requested > std::min(longest, distinct))
        throw InputError("the induction string must have 2 to " + std::to_string(std::min(longest, distinct)) + " characters (the context holds it twice up to " +
                         std::to_string(longest) + ", the text has " + std::to_string(distinct) + " distinct characters)");
    return requested ? requested : std::min({induction_length, longest, distinct});
}

nlohmann::json trained_head_patterns(const Model<float>& model, const TrainingText& text, std::size_t context,
                                     std::size_t induction_R) {
    if (text.heldout.size() + 1 < context) throw InputError("trained_head_patterns: the held-out text is shorter than the context");
    std::vector<std::int32_t> ordinary = {text.bos_id};
    ordinary.insert(ordinary.end(), text.heldout.begin(), text.heldout.begin() + std::ptrdiff_t(context - 1));
    const std::size_t R = trained_induction_length(text, context, induction_R);
    TinyBackend backend(model);
    return head_patterns_to_json(head_patterns(backend, ordinary, text.bos_id, R, 1, text.first_id));
}

TrainingMemory training_memory(const ModelConfig& c, const TrainingSettings& s, std::size_t text_characters,
                               std::size_t threads) {
    const double scalar = sizeof(float);
    const double L = c.n_layers, D = c.hidden_size, F = c.ffn_size, V = c.vocab_size, Hq = c.n_heads, Hkv = c.n_kv_heads,
                 dh = c.head_dim, T = double(s.batch.context);
    const double parameters = c.parameter_count();
    const std::size_t shards = shard_count(s.batch.windows);
    TrainingMemory m;
    m.weights = parameters * scalar * double(3 + shards);  // model, 2 moments, a gradient per shard

    // One shard of b windows: what the forward keeps for the backward, and the backward's peak on top.
    const double b = double(std::min(s.batch.windows, shard_windows));
    const double map = b * Hq * T * T;                                      // one [b, Hq, T, T]
    const double kept_per_layer = 2 * map + b * T * (6 * D + 3 * Hq * dh + 3 * Hkv * dh);
    const double backward_peak = 3 * map + b * T * (3 * F + 4 * D) + T * T;
    const double logits = 2 * b * T * V;
    const double shard = L * kept_per_layer + backward_peak + logits;
    const double step = shard * double(std::min<std::size_t>(std::max<std::size_t>(threads, 1), shards));
    // The held-out evaluation: its windows at once, one layer's maps alive at a time.
    const double e = double(std::min(s.heldout_count, std::max<std::size_t>(text_characters / 10, 1)));
    const double evaluation = 3 * e * Hq * T * T + e * T * (6 * D + 3 * F + 2 * V);
    m.activations = std::max(step, evaluation) * scalar;
    m.text = double(text_characters) * (sizeof(std::int32_t) + 1);
    return m;
}

nlohmann::json training_settings_json(const TrainingSettings& s) {
    return {{"steps", s.steps},
            {"seed", s.seed},
            {"batch", s.batch.windows},
            {"context", s.batch.context},
            {"repeat_fraction", s.batch.repeat_fraction},
            {"peak_learning_rate", s.peak_rate},
            {"warmup_steps", s.warmup_steps},
            {"final_learning_rate_ratio", s.final_rate_ratio},
            {"adamw",
             {{"beta1", s.adamw.beta1},
              {"beta2", s.adamw.beta2},
              {"epsilon", s.adamw.epsilon},
              {"weight_decay", s.adamw.weight_decay},
              {"clip_norm", s.adamw.clip_norm}}},
            {"heldout_windows", s.heldout_count}};
}

}  // namespace anatomy
