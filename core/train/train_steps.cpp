#include "train_steps.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include <nlohmann/json.hpp>

#include "../model/backward.hpp"
#include "../model/random.hpp"

namespace anatomy {

namespace {

// Windows [first, last) of a batch.  [B, T] -> [last - first, T]
TokenIds windows(const TokenIds& batch, std::size_t first, std::size_t last) {
    return xt::view(batch, xt::range(first, last), xt::all());
}

void require_in_vocabulary(const TokenIds& ids, int vocab_size, const char* what) {
    for (const std::int32_t id : ids)
        if (id < 0 || id >= vocab_size)
            throw InputError(std::string("training ") + what + " hold id " + std::to_string(id) + ", outside the vocabulary of " +
                             std::to_string(vocab_size));
}

}  // namespace

StepResult training_step(Model<float>& model, AdamWState<float>& state, const TokenIds& tokens, const TokenIds& targets,
                         const AdamWSettings& settings, double rate, const ParallelFor& parallel) {
    if (tokens.shape() != targets.shape()) throw InputError("training tokens and targets differ in shape");
    // Checked here, not in the shards: an exception must not leave a thread.
    require_in_vocabulary(tokens, model.config.vocab_size, "tokens");
    require_in_vocabulary(targets, model.config.vocab_size, "targets");
    const std::size_t B = tokens.shape(0), shards = (B + shard_windows - 1) / shard_windows;
    std::vector<ModelWeights<float>> shard_gradients(shards, zero_gradients(model));
    std::vector<double> shard_losses(shards);
    auto run_shards = [&](std::size_t first, std::size_t last) {
        for (std::size_t s = first; s < last; ++s) {
            const std::size_t b0 = s * shard_windows, b1 = std::min(B, b0 + shard_windows);
            shard_losses[s] = loss_and_gradients(model, windows(tokens, b0, b1), windows(targets, b0, b1), shard_gradients[s]);
        }
    };
    if (parallel) parallel(shards, run_shards);
    else run_shards(0, shards);

    // The batch's mean: each shard's mean weighted by its share of the windows.
    ModelWeights<float> gradients = zero_gradients(model);
    StepResult result;
    for (std::size_t s = 0; s < shards; ++s) {
        const std::size_t b0 = s * shard_windows, b1 = std::min(B, b0 + shard_windows);
        const float share = float(b1 - b0) / float(B);
        result.loss += double(share) * shard_losses[s];
        for_each_tensor([share](TensorKind, auto& total, const auto& part) { total += share * part; }, gradients,
                        shard_gradients[s]);
    }
    result.gradient_norm = clip_gradients(gradients, settings.clip_norm);
    adamw_step(model, gradients, state, settings, rate);
    return result;
}

TrainingRun train_steps(Model<float>& model, AdamWState<float>& state, const TokenIds& tokens, const TokenIds& targets,
                        const AdamWSettings& settings, const LearningRateSchedule& schedule, int first_step, int steps,
                        const ParallelFor& parallel) {
    TrainingRun run;
    for (int step = first_step; step < first_step + steps; ++step) {
        const StepResult result = training_step(model, state, tokens, targets, settings, schedule.at(step), parallel);
        run.losses.push_back(result.loss);
        run.norms.push_back(result.gradient_norm);
    }
    return run;
}

nlohmann::json training_bits(std::uint64_t seed, int steps) {
    Model<float> model = random_model(tiny_config(), seed);
    const std::size_t B = 4, T = 32, V = std::size_t(model.config.vocab_size);
    TokenIds tokens({B, T}), targets({B, T});
    SplitMix64 random(seed + 1);
    for (auto& id : tokens) id = std::int32_t(random.next_u64() % V);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t) targets(b, t) = tokens(b, (t + 1) % T);
    AdamWState<float> state = adamw_state(model);
    const LearningRateSchedule schedule{3e-3, 10, steps, 0.1};
    const TrainingRun run = train_steps(model, state, tokens, targets, AdamWSettings{}, schedule, 0, steps);
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(weights_hash(model.weights)));
    return {{"losses", run.losses}, {"norms", run.norms}, {"weights_hash", hash}};
}

std::uint64_t weights_hash(const ModelWeights<float>& weights) {
    std::uint64_t hash = 1469598103934665603ull;
    for_each_tensor(
        [&](TensorKind, const auto& tensor) {
            for (const float value : tensor) {
                std::uint32_t bits;
                std::memcpy(&bits, &value, 4);
                hash = (hash ^ bits) * 1099511628211ull;
            }
        },
        weights);
    return hash;
}

}  // namespace anatomy
