#include "train_steps.hpp"

#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "../model/backward.hpp"
#include "../model/random.hpp"

namespace anatomy {

TrainingRun train_steps(Model<float>& model, AdamWState<float>& state, const TokenIds& tokens, const TokenIds& targets,
                        const AdamWSettings& settings, const LearningRateSchedule& schedule, int first_step, int steps) {
    TrainingRun run;
    for (int step = first_step; step < first_step + steps; ++step) {
        ModelWeights<float> gradients = zero_gradients(model);
        run.losses.push_back(loss_and_gradients(model, tokens, targets, gradients));
        run.norms.push_back(clip_gradients(gradients, settings.clip_norm));
        adamw_step(model, gradients, state, settings, schedule.at(step));
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
