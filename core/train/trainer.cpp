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

nlohmann::json trained_head_patterns(const Model<float>& model, const TrainingText& text, std::size_t context,
                                     std::size_t induction_R) {
    if (text.heldout.size() + 1 < context) throw InputError("trained_head_patterns: the held-out text is shorter than the context");
    std::vector<std::int32_t> ordinary = {text.bos_id};
    ordinary.insert(ordinary.end(), text.heldout.begin(), text.heldout.begin() + std::ptrdiff_t(context - 1));
    const std::size_t longest = (context - 1) / 2;
    if (induction_R == 1 || induction_R > longest)
        throw InputError("the induction string must have 2 to " + std::to_string(longest) + " characters");
    const std::size_t R = induction_R ? induction_R : std::min<std::size_t>(induction_length, longest);
    TinyBackend backend(model);
    return head_patterns_to_json(head_patterns(backend, ordinary, text.bos_id, R, 1, text.first_id));
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
