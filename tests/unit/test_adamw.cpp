// The optimizer (core/train/adamw.hpp): the schedule, clipping and one AdamW step
// against their closed forms, and a short training run that must learn and repeat
// itself bit for bit.
#include <doctest/doctest.h>

#include <cmath>

#include "model/backward.hpp"
#include "train/adamw.hpp"

using namespace anatomy;

TEST_CASE("the learning rate warms up linearly, then follows a cosine down to its floor") {
    const LearningRateSchedule s{1e-3, 10, 110, 0.1};
    CHECK(s.at(0) == doctest::Approx(1e-4));           // 1/10 of the peak at the first step
    CHECK(s.at(9) == doctest::Approx(1e-3));           // the peak at the end of the warm-up
    CHECK(s.at(10) == doctest::Approx(1e-3));          // the cosine starts at the peak
    CHECK(s.at(60) == doctest::Approx(0.55e-3));       // half way: floor + half the span
    CHECK(s.at(110) == doctest::Approx(1e-4));         // the floor
    CHECK(s.at(500) == doctest::Approx(1e-4));
    for (int t = 10; t < 110; ++t) CHECK(s.at(t + 1) <= s.at(t));
}

TEST_CASE("clipping scales every gradient by max / norm, only when the norm is larger") {
    const Model<double> model = cast_model<double>(random_model(tiny_config(), 1));
    ModelWeights<double> g = zero_gradients(model);
    g.embedding(0, 0) = 3, g.layers[1].w_down(5, 7) = 4;  // norm 5
    CHECK(gradient_norm(g) == 5.0);
    CHECK(clip_gradients(g, 10.0) == 5.0);
    CHECK(g.embedding(0, 0) == 3.0);
    CHECK(clip_gradients(g, 1.0) == 5.0);
    CHECK(gradient_norm(g) == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(g.layers[1].w_down(5, 7) == doctest::Approx(0.8));
}

TEST_CASE("one AdamW step: the bias-corrected update, and decay on projection matrices only") {
    Model<double> model = cast_model<double>(random_model(tiny_config(), 1));
    const Model<double> before = model;
    ModelWeights<double> g = zero_gradients(model);
    g.layers[0].wq(1, 2) = 0.5;
    g.layers[0].attn_norm(3) = -0.25;
    AdamWState<double> state = adamw_state(model);
    const AdamWSettings settings;
    const double lr = 0.01;
    adamw_step(model, g, state, settings, lr);
    // First step: m / (1 - beta1) = g and v / (1 - beta2) = g^2, so the update is lr * g / (|g| + eps).
    const double w = before.weights.layers[0].wq(1, 2);
    CHECK(model.weights.layers[0].wq(1, 2) == doctest::Approx(w - lr * 0.5 / (0.5 + 1e-8) - lr * 0.1 * w).epsilon(1e-14));
    const double n = before.weights.layers[0].attn_norm(3);
    CHECK(model.weights.layers[0].attn_norm(3) == doctest::Approx(n + lr * 0.25 / (0.25 + 1e-8)).epsilon(1e-14));
    // Zero gradient: a matrix only decays; a norm scale or the embedding does not move.
    const double other = before.weights.layers[1].wk(0, 0);
    CHECK(model.weights.layers[1].wk(0, 0) == doctest::Approx(other * (1 - lr * 0.1)).epsilon(1e-14));
    CHECK(model.weights.layers[1].ffn_norm(0) == before.weights.layers[1].ffn_norm(0));
    CHECK(model.weights.embedding(4, 4) == before.weights.embedding(4, 4));
    CHECK(state.steps == 1);
    CHECK(state.first.layers[0].wq(1, 2) == doctest::Approx(0.05));       // (1 - 0.9) * 0.5
    CHECK(state.second.layers[0].wq(1, 2) == doctest::Approx(0.0125));    // (1 - 0.95) * 0.25
}

namespace {

// 80 steps on one batch of a repeating pattern, from seed 5; the losses, step by step.
std::vector<double> train_on_a_pattern() {
    Model<float> model = random_model(tiny_config(), 5);
    TokenIds tokens({2, 16}), targets({2, 16});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t t = 0; t < 16; ++t) {
            tokens(b, t) = std::int32_t(3 + (b + t) % 5);        // 3 4 5 6 7 3 4 ...
            targets(b, t) = std::int32_t(3 + (b + t + 1) % 5);  // the next one
        }
    AdamWState<float> state = adamw_state(model);
    const LearningRateSchedule schedule{1e-2, 10, 80, 0.1};
    std::vector<double> losses;
    for (int step = 0; step < 80; ++step) {
        ModelWeights<float> g = zero_gradients(model);
        losses.push_back(loss_and_gradients(model, tokens, targets, g));
        clip_gradients(g, 1.0);
        adamw_step(model, g, state, AdamWSettings{}, schedule.at(step));
    }
    return losses;
}

}  // namespace

TEST_CASE("training learns a repeating pattern, and the same seed and data give the same bits") {
    const std::vector<double> losses = train_on_a_pattern();
    CHECK(losses.front() > 2.0);   // about log 32 = 3.47 for random weights
    CHECK(losses.back() < 0.1);    // the next token is determined
    CHECK(train_on_a_pattern() == losses);
}
