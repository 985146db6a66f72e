#include "train_steps.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
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

// The windows [first, last) of shard s in a batch of B.
std::pair<std::size_t, std::size_t> shard_range(std::size_t s, std::size_t B) {
    const std::size_t first = s * shard_windows;
    return {first, std::min(B, first + shard_windows)};
}

void require_in_vocabulary(const TokenIds& ids, int vocab_size, const char* what) {
    for (const std::int32_t id : ids)
        if (id < 0 || id >= vocab_size)
            throw InputError(std::string("training ") + what + " hold id " + std::to_string(id) + ", outside the vocabulary of " +
                             std::to_string(vocab_size));
}

}  // namespace

std::size_t shard_count(std::size_t windows) { return (windows + shard_windows - 1) / shard_windows; }

ShardGradients shard_gradients(const Model<float>& model, const TokenIds& tokens, const TokenIds& targets, std::size_t shard) {
    const std::size_t B = tokens.shape(0);
    const auto [first, last] = shard_range(shard, B);
    if (first >= B) throw InputError("shard " + std::to_string(shard) + " is beyond the batch's " + std::to_string(shard_count(B)));
    ShardGradients result{0, zero_gradients(model)};
    result.loss = loss_and_gradients(model, windows(tokens, first, last), windows(targets, first, last), result.gradients);
    return result;
}

StepResult apply_shards(Model<float>& model, AdamWState<float>& state, const std::vector<ShardGradients>& shards,
                        std::size_t windows, const AdamWSettings& settings, double rate) {
    if (shards.size() != shard_count(windows))
        throw InputError("a batch of " + std::to_string(windows) + " windows has " + std::to_string(shard_count(windows)) +
                         " shards, not " + std::to_string(shards.size()));
    // The batch's mean: each shard's mean weighted by its share of the windows.
    ModelWeights<float> gradients = zero_gradients(model);
    StepResult result;
    for (std::size_t s = 0; s < shards.size(); ++s) {
        const auto [first, last] = shard_range(s, windows);
        const float share = float(last - first) / float(windows);
        result.loss += double(share) * shards[s].loss;
        for_each_tensor([share](TensorKind, auto& total, const auto& part) { total += share * part; }, gradients,
                        shards[s].gradients);
    }
    result.gradient_norm = clip_gradients(gradients, settings.clip_norm);
    adamw_step(model, gradients, state, settings, rate);
    return result;
}

std::vector<ShardGradients> every_shard(const Model<float>& model, const TokenIds& tokens, const TokenIds& targets,
                                        const ParallelFor& parallel) {
    if (tokens.shape() != targets.shape()) throw InputError("training tokens and targets differ in shape");
    // Checked here, not in the shards: an exception must not leave a thread.
    require_in_vocabulary(tokens, model.config.vocab_size, "tokens");
    require_in_vocabulary(targets, model.config.vocab_size, "targets");
    std::vector<ShardGradients> shards(shard_count(tokens.shape(0)));
    auto run_shards = [&](std::size_t first, std::size_t last) {
        for (std::size_t s = first; s < last; ++s) shards[s] = shard_gradients(model, tokens, targets, s);
    };
    if (parallel) parallel(shards.size(), run_shards);
    else run_shards(0, shards.size());
    return shards;
}

StepResult training_step(Model<float>& model, AdamWState<float>& state, const TokenIds& tokens, const TokenIds& targets,
                         const AdamWSettings& settings, double rate, const ParallelFor& parallel) {
    return apply_shards(model, state, every_shard(model, tokens, targets, parallel), tokens.shape(0), settings, rate);
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
