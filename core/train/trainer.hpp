// A training run of the decoder on a text, one step at a time: what `attn train`
// runs natively and the page's training widget runs in a Web Worker, with the same
// seed giving the same bits in both.
//
//   start:   weights drawn from the seed (model/random.hpp), the embedding scaled to
//            a standard deviation of 0.02 so the tied head's first logits are near 0
//            and the loss starts at about ln V
//   step:    a batch drawn from the training part (train/training_text.hpp), then
//            training_step (train/train_steps.hpp) at the schedule's rate
//   measure: the loss on fixed windows of held-out text
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "../parallel.hpp"
#include "adamw.hpp"
#include "train_steps.hpp"
#include "training_text.hpp"

namespace anatomy {

struct TrainingSettings {
    int steps = 3000;
    std::uint64_t seed = 1;
    BatchShape batch;             // 64 windows of 64 tokens, no repeated strings
    double peak_rate = 3e-3;      // AdamW's learning rate after warm-up
    int warmup_steps = 100;
    double final_rate_ratio = 0.1;  // the cosine ends at this share of the peak
    AdamWSettings adamw;
    std::size_t heldout_count = 32;  // windows of held-out text the held-out loss averages over
};

class Trainer {
public:
    // `config`'s vocabulary must be the text's (its vocab_size is set from it).
    // Throws InputError for settings that cannot train (no steps, a context beyond
    // the text, a repeat fraction outside [0, 1], ...).
    Trainer(ModelConfig config, TrainingText text, const TrainingSettings& settings);

    // One step on the next batch.
    StepResult step(const ParallelFor& parallel = {});

    // The same step in three parts, for a caller that computes the shards elsewhere:
    // the page's training worker shares them with helper workers, each holding a
    // replica of this Trainer (same text, same settings, so the same batches) and
    // each ending the step with every shard, so the replicas stay equal, bit for bit.
    //   begin_step: draws the next batch  ->  its number of shards
    //   shard:      shard s of that batch (train_steps.hpp's shard_gradients)
    //   end_step:   apply_shards with all of them, at this step's rate
    std::size_t begin_step();
    ShardGradients shard(std::size_t s) const;
    StepResult end_step(const std::vector<ShardGradients>& shards);
    // The mean loss over the held-out windows, nats per character.
    double heldout_loss() const;

    int steps_done() const { return steps_done_; }
    const Model<float>& model() const { return model_; }
    const TrainingText& text() const { return text_; }
    const TrainingSettings& settings() const { return settings_; }

private:
    TrainingSettings settings_;
    TrainingText text_;
    Model<float> model_;
    AdamWState<float> state_;
    LearningRateSchedule schedule_;
    SplitMix64 random_;
    Batch heldout_;
    Batch batch_;        // the batch begin_step drew, while drawn_
    bool drawn_ = false;
    int steps_done_ = 0;
};

// What the model's heads do (lessons/head_patterns.hpp), measured as the page and
// the run's record report them: the ordinary text is BOS and the first context - 1
// characters of the held-out part; the induction string has R characters, drawn
// from the whole character vocabulary. R = 0 means the longest up to 32 that keeps
// both passes within the positions the model was trained on ((context - 1) / 2) and
// that the text's distinct characters can spell (trained_induction_length);
// the page's training widget asks for 12, within the 8 to 16 its repeated windows
// teach (a head that copies across those distances may not yet across 31).
// Throws InputError for an R that does not fit twice in the context.
nlohmann::json trained_head_patterns(const Model<float>& model, const TrainingText& text, std::size_t context,
                                     std::size_t induction_R = 0);
// The R trained_head_patterns uses for `requested` (0: the longest that fits), so a
// caller can check a text and a context before training on them. Throws InputError
// for a text of fewer than 2 distinct characters, a context under 5, or a requested
// R that the context or the characters cannot hold.
std::size_t trained_induction_length(const TrainingText& text, std::size_t context, std::size_t requested = 0);

// The memory a run needs at its peak, estimated from the shapes (float32 everywhere):
//   weights        the model, AdamW's two moments, and one gradient per shard of a batch
//   activations    the larger of a step and a held-out evaluation: a step computes
//                  `threads` shards at once (train_steps.hpp), each keeping every layer's
//                  [b, Hq, T, T] scores and probabilities for the backward plus three more
//                  such maps while a layer's attention runs backward, and [b, T, D|F|V]
//                  tensors; the evaluation runs its windows in one batch, three maps at once
//   text           the text's characters as ids, and the text itself
// The attention maps dominate at long contexts: 2 layers of 4 heads at context 2048 and
// batch 32 on 2 threads need about 7.7 GB. tests/cli/test_train.py holds the estimate
// to attn train's measured peak (within a factor of 1.5 either way).
struct TrainingMemory {
    double weights = 0, activations = 0, text = 0;  // bytes (in double: a config may describe more than any machine holds)
    double total() const { return weights + activations + text; }
};
TrainingMemory training_memory(const ModelConfig& config, const TrainingSettings& settings, std::size_t text_characters,
                               std::size_t threads);

// The training settings as JSON (for the record a run leaves beside its weights).
nlohmann::json training_settings_json(const TrainingSettings& settings);

}  // namespace anatomy
