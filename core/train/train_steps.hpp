// Training steps: each the loss and gradients of a batch (model/backward), the
// gradient clipped, then one AdamW step at the schedule's rate; `attn train` and the
// page's training widget take them through train/trainer.hpp. The arithmetic
// runs in a fixed order, compiled without fused multiply-add, with the core's own
// float e^x in softmax and SiLU; the double-precision exp, log, cos, sin and pow of
// the C library (glibc natively, musl in wasm) remain, in the loss, RoPE's angles and
// AdamW's bias correction. tests/wasm/training_bits.test.mjs holds a native and a
// wasm run of the same model, batch and settings to the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../parallel.hpp"
#include "adamw.hpp"

namespace anatomy {

// A batch's windows are cut into shards of this many; each shard's loss and gradient
// are computed on their own (at once, where the ParallelFor has threads) and added in
// shard order, weighted by the shard's share of the batch. So a step gives the same
// bits on any number of threads, natively and in wasm.
inline constexpr std::size_t shard_windows = 8;

struct StepResult {
    double loss = 0;           // the batch's mean cross-entropy before the step
    double gradient_norm = 0;  // before clipping
};

// The shards a batch of `windows` windows is cut into: shard s holds windows
// [s * shard_windows, min(windows, (s + 1) * shard_windows)).
std::size_t shard_count(std::size_t windows);

struct ShardGradients {
    double loss = 0;                  // the shard's mean cross-entropy
    ModelWeights<float> gradients;    // of that mean, shaped as the model's weights
};

// Shard s of a batch, computed on its own (model/backward.hpp's loss_and_gradients).
//   tokens, targets: [B, T]  ->  the loss and gradient of windows of shard s
ShardGradients shard_gradients(const Model<float>& model, const TokenIds& tokens, const TokenIds& targets, std::size_t shard);

// Every shard of a batch (at once, where `parallel` has threads).
//   tokens, targets: [B, T]  ->  [shard_count(B)]; throws InputError for an id outside the vocabulary
std::vector<ShardGradients> every_shard(const Model<float>& model, const TokenIds& tokens, const TokenIds& targets,
                                        const ParallelFor& parallel = {});

// The step from a batch's shards, wherever they were computed: their mean weighted
// by each shard's share of the `windows` windows, added in shard order, clipped to
// settings.clip_norm, then one AdamW step at learning rate `rate`.
//   shards: [shard_count(windows)]
StepResult apply_shards(Model<float>& model, AdamWState<float>& state, const std::vector<ShardGradients>& shards,
                        std::size_t windows, const AdamWSettings& settings, double rate);

// One step: every_shard, then apply_shards.
//   tokens, targets: [B, T]; throws InputError for an id outside the vocabulary.
StepResult training_step(Model<float>& model, AdamWState<float>& state, const TokenIds& tokens, const TokenIds& targets,
                         const AdamWSettings& settings, double rate, const ParallelFor& parallel = {});

struct TrainingRun {
    std::vector<double> losses;  // [steps] the loss before each step
    std::vector<double> norms;   // [steps] the gradient norm before clipping
};

//   tokens, targets: [B, T]; `state` carries the moments across calls.
// `steps` steps on the same batch, at the schedule's rate for steps first_step onwards.
TrainingRun train_steps(Model<float>& model, AdamWState<float>& state, const TokenIds& tokens, const TokenIds& targets,
                        const AdamWSettings& settings, const LearningRateSchedule& schedule, int first_step, int steps,
                        const ParallelFor& parallel = {});

// The run both builds make for that test: the tiny model from `seed`, a batch of 4
// windows of 32 random ids (from seed + 1), each window's targets its ids shifted
// by one, `steps` steps at a warm-up-then-cosine rate peaking at 3e-3.
//   -> {"losses": [...], "norms": [...], "weights_hash": "hex"} (doubles printed exactly by JSON)
nlohmann::json training_bits(std::uint64_t seed, int steps);

// FNV-1a over every weight's bits, in the order of weights.hpp: equal hashes, equal weights.
std::uint64_t weights_hash(const ModelWeights<float>& weights);

}  // namespace anatomy
