// Every operation's backward (core/ops, beside its forward) and the whole model's
// gradient (core/model/backward.hpp) against central finite differences, in double.
//
// Each check takes a scalar L = sum(w * op(inputs)) with fixed random weights w (so
// dL/d output = w), nudges every input entry by +-h and compares
//   (L(x + h) - L(x - h)) / 2h
// with the analytic gradient. The bound is 1e-6 on the largest difference relative
// to the largest gradient entry: with h = 1e-5 the central difference's truncation
// error is about h^2 |L'''| / 6 ~ 1e-11 and its rounding error about
// 1e-16 |L| / h ~ 1e-11, so a correct backward sits between 1e-11 and 1e-9 (measured:
// 8.4e-12 to 1.04e-9 over these tests); a wrong term, sign, index or missing sum is
// off by the size of a gradient entry, above 1e-2. The last test shows a gradient wrong in one entry fails.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <vector>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "model/backward.hpp"
#include "model/random.hpp"
#include "ops/attention.hpp"
#include "ops/embedding.hpp"
#include "ops/heads.hpp"
#include "ops/linear.hpp"
#include "ops/logits.hpp"
#include "ops/rms_norm.hpp"
#include "ops/rope.hpp"
#include "ops/swiglu.hpp"
#include "test_helpers.hpp"

using namespace anatomy;

namespace {

constexpr double step = 1e-5;
constexpr double bound = 1e-6;

template <typename Container>
void fill_normal(Container& c, std::uint64_t seed, double scale = 1.0) {
    SplitMix64 random(seed);
    for (auto& v : c) v = scale * random.normal();
}

// sum(w * y) over every entry.
template <typename A, typename B>
double weighted_sum(const A& w, const B& y) {
    double total = 0;
    for (std::size_t i = 0; i < y.size(); ++i) total += w.data()[i] * y.data()[i];
    return total;
}

// Largest |finite difference - analytic| over the entries of x (every `stride`-th
// one), relative to the largest analytic entry. `loss` is evaluated with x as it is
// at the time of the call.
template <typename Tensor, typename Grad>
double relative_error(Tensor& x, const Grad& analytic, const std::function<double()>& loss, std::size_t stride = 1) {
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < x.size(); i += stride) {
        const double kept = x.data()[i];
        x.data()[i] = kept + step;
        const double up = loss();
        x.data()[i] = kept - step;
        const double down = loss();
        x.data()[i] = kept;
        worst = std::max(worst, std::fabs((up - down) / (2 * step) - double(analytic.data()[i])));
        largest = std::max(largest, std::fabs(double(analytic.data()[i])));
    }
    return worst / std::max(largest, 1e-300);
}

TokenIds ids_of(std::size_t B, std::size_t T, std::int32_t V, std::uint64_t seed) {
    TokenIds ids({B, T});
    SplitMix64 random(seed);
    for (auto& id : ids) id = std::int32_t(random.next_u64() % std::uint64_t(V));
    return ids;
}

}  // namespace

TEST_CASE("embedding backward: each row's gradient added to the row it was read from") {
    Matrix<double> table({7, 5});
    fill_normal(table, 1);
    const TokenIds ids = ids_of(2, 6, 7, 2);  // repeats ids: their gradients must add
    Tensor3<double> w({2, 6, 5});
    fill_normal(w, 3);
    Matrix<double> dtable = xt::zeros<double>(table.shape());
    embed_backward(w, ids, dtable);
    CHECK(relative_error(table, dtable, [&] { return weighted_sum(w, embed(table, ids)); }) < bound);
}

TEST_CASE("RMSNorm backward: the input and the scale") {
    Tensor3<double> x({2, 3, 6});
    Vector<double> scale = xt::zeros<double>({std::size_t(6)});  // ({6}) would be a one-element vector
    Tensor3<double> w({2, 3, 6});
    fill_normal(x, 4), fill_normal(scale, 5), fill_normal(w, 6);
    Vector<double> dscale = xt::zeros<double>({std::size_t(6)});
    const Tensor3<double> dx = rms_norm_backward(x, scale, 1e-6, w, dscale);
    const auto loss = [&] { return weighted_sum(w, rms_norm(x, scale, 1e-6)); };
    CHECK(relative_error(x, dx, loss) < bound);
    CHECK(relative_error(scale, dscale, loss) < bound);
}

TEST_CASE("projection backward: the input and the weight") {
    Tensor3<double> x({2, 3, 5});
    Matrix<double> weight({5, 4});
    Tensor3<double> w({2, 3, 4});
    fill_normal(x, 7), fill_normal(weight, 8), fill_normal(w, 9);
    Matrix<double> dweight = xt::zeros<double>(weight.shape());
    const Tensor3<double> dx = linear_backward(x, weight, w, dweight);
    const auto loss = [&] { return weighted_sum(w, linear(x, weight)); };
    CHECK(relative_error(x, dx, loss) < bound);
    CHECK(relative_error(weight, dweight, loss) < bound);
}

TEST_CASE("RoPE backward, both pairings, at positions after a cache") {
    const std::vector<std::int64_t> positions = {5, 6, 7, 8};
    for (RopePairing pairing : {RopePairing::half_split, RopePairing::interleaved}) {
        Tensor4<double> x({1, 2, 4, 8}), w({1, 2, 4, 8});
        fill_normal(x, 10), fill_normal(w, 11);
        const Tensor4<double> dx = apply_rope_backward(w, positions, 10000.0, pairing);
        CHECK(relative_error(x, dx, [&] { return weighted_sum(w, apply_rope(x, positions, 10000.0, pairing)); }) < bound);
    }
}

TEST_CASE("split and merge heads are each other's backward") {
    Tensor3<double> x({2, 3, 8});
    Tensor4<double> w({2, 2, 3, 4});
    fill_normal(x, 12), fill_normal(w, 13);
    CHECK(relative_error(x, merge_heads(w), [&] { return weighted_sum(w, split_heads(x, 2)); }) < bound);
}

TEST_CASE("attention backward, step by step: scores (GQA), mask, softmax, weighted values (GQA)") {
    const std::size_t B = 1, Hq = 4, Hkv = 2, T = 5, dh = 4;
    Tensor4<double> q({B, Hq, T, dh}), k({B, Hkv, T, dh}), v({B, Hkv, T, dh});
    fill_normal(q, 14), fill_normal(k, 15), fill_normal(v, 16);
    const Mask allowed = causal_mask(T, T);

    SUBCASE("scores: dq, and dk summed over the two query heads that share each KV head") {
        Tensor4<double> w({B, Hq, T, T});
        fill_normal(w, 17);
        Tensor4<double> dk = xt::zeros<double>(k.shape());
        const Tensor4<double> dq = attention_scores_backward(q, k, w, dk);
        const auto loss = [&] { return weighted_sum(w, attention_scores(q, k)); };
        CHECK(relative_error(q, dq, loss) < bound);
        CHECK(relative_error(k, dk, loss) < bound);
    }
    SUBCASE("mask then softmax: forbidden scores get no gradient") {
        Tensor4<double> scores({B, Hq, T, T}), w({B, Hq, T, T});
        fill_normal(scores, 18), fill_normal(w, 19);
        const Tensor4<double> probs = softmax_rows(apply_mask(scores, allowed));
        const Tensor4<double> dscores = apply_mask_backward(softmax_rows_backward(probs, w), allowed);
        CHECK(relative_error(scores, dscores, [&] { return weighted_sum(w, softmax_rows(apply_mask(scores, allowed))); }) < bound);
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t s = t + 1; s < T; ++s) CHECK(dscores(0, 1, t, s) == 0.0);
    }
    SUBCASE("mask then softmax with sinks: the scores and each head's sink logit") {
        Tensor4<double> scores({B, Hq, T, T}), w({B, Hq, T, T});
        Vector<double> sinks = xt::zeros<double>({Hq});
        fill_normal(scores, 34), fill_normal(w, 35), fill_normal(sinks, 36, 2.0);
        const auto forward = [&] { return softmax_rows_with_sinks(apply_mask(scores, allowed), sinks); };
        Vector<double> dsinks = xt::zeros<double>(sinks.shape());
        const Tensor4<double> dscores = apply_mask_backward(softmax_rows_with_sinks_backward(forward(), w, dsinks), allowed);
        const auto loss = [&] { return weighted_sum(w, forward()); };
        CHECK(relative_error(scores, dscores, loss) < bound);
        CHECK(relative_error(sinks, dsinks, loss) < bound);
        // A sink's gradient that left out the rows of the other heads, or took the keys' share
        // for the sink's, is off by a gradient entry's size.
        Vector<double> wrong = dsinks;
        wrong(2) *= 0.5;
        CHECK(relative_error(sinks, wrong, loss) > 1e-2);
    }
    SUBCASE("weighted values: dprobs, and dv summed over the group") {
        Tensor4<double> probs = softmax_rows(apply_mask(attention_scores(q, k), allowed));
        Tensor4<double> w({B, Hq, T, dh});
        fill_normal(w, 20);
        Tensor4<double> dv = xt::zeros<double>(v.shape());
        const Tensor4<double> dprobs = weighted_values_backward(probs, v, w, dv);
        const auto loss = [&] { return weighted_sum(w, weighted_values(probs, v)); };
        CHECK(relative_error(probs, dprobs, loss) < bound);
        CHECK(relative_error(v, dv, loss) < bound);
    }
}

TEST_CASE("SwiGLU backward: the gate and the up path") {
    Tensor3<double> gate({2, 3, 6}), up({2, 3, 6}), w({2, 3, 6});
    fill_normal(gate, 21, 2.0), fill_normal(up, 22), fill_normal(w, 23);
    const auto [dgate, dup] = swiglu_hidden_backward(gate, up, w);
    const auto loss = [&] { return weighted_sum(w, swiglu_hidden(gate, up)); };
    CHECK(relative_error(gate, dgate, loss) < bound);
    CHECK(relative_error(up, dup, loss) < bound);
}

TEST_CASE("tied logits and cross-entropy backward") {
    Tensor3<double> x({2, 3, 5});
    Matrix<double> table({7, 5});
    fill_normal(x, 24), fill_normal(table, 25);
    const TokenIds targets = ids_of(2, 3, 7, 26);
    const Tensor3<double> dlogits = cross_entropy_backward(tied_logits(x, table), targets);
    Matrix<double> dtable = xt::zeros<double>(table.shape());
    const Tensor3<double> dx = tied_logits_backward(x, table, dlogits, dtable);
    const auto loss = [&] { return cross_entropy(tied_logits(x, table), targets); };
    CHECK(relative_error(x, dx, loss) < bound);
    CHECK(relative_error(table, dtable, loss) < bound);
    // Closed form: uniform logits give log V nats.
    CHECK(cross_entropy(Tensor3<double>(xt::zeros<double>({std::size_t(1), std::size_t(2), std::size_t(7)})), ids_of(1, 2, 7, 1)) ==
          doctest::Approx(std::log(7.0)).epsilon(1e-15));
    TokenIds outside = targets;
    outside(1, 2) = 7;
    CHECK_THROWS_AS(cross_entropy(tied_logits(x, table), outside), InputError);
}

// Under the sanitizers, the case after it runs the same backward pass (with sinks) on a sample of weights.
TEST_CASE("the whole model's gradient, every weight, matches finite differences" * doctest::skip(test::under_sanitizer)) {
    Model<double> model = cast_model<double>(random_model(tiny_config(), 3));
    const TokenIds tokens = ids_of(2, 6, 32, 27);
    const TokenIds targets = ids_of(2, 6, 32, 28);
    ModelWeights<double> g = zero_gradients(model);
    const double loss = loss_and_gradients(model, tokens, targets, g);
    CHECK(loss == doctest::Approx(training_loss(model, tokens, targets)).epsilon(1e-14));
    const auto evaluate = [&] { return training_loss(model, tokens, targets); };
    // Every third entry of each matrix (a third of its 32 to 3,072), every entry of each
    // norm scale: about 17,000 passes, 4 s natively.
    const auto check = [&](auto& weight, const auto& gradient) {
        CHECK(relative_error(weight, gradient, evaluate, weight.dimension() == 1 ? 1 : 3) < bound);
    };
    ModelWeights<double>& w = model.weights;
    check(w.embedding, g.embedding);  // both shares: the rows read and the tied head
    check(w.final_norm, g.final_norm);
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
        CAPTURE(l);
        LayerWeights<double>& layer = w.layers[l];
        LayerWeights<double>& grad = g.layers[l];
        check(layer.attn_norm, grad.attn_norm);
        check(layer.wq, grad.wq);
        check(layer.wk, grad.wk);
        check(layer.wv, grad.wv);
        check(layer.wo, grad.wo);
        check(layer.ffn_norm, grad.ffn_norm);
        check(layer.w_gate, grad.w_gate);
        check(layer.w_up, grad.w_up);
        check(layer.w_down, grad.w_down);
    }
}

TEST_CASE("with attention sinks, the whole model's gradient matches finite differences, the sinks' included") {
    ModelConfig config = tiny_config();
    config.attention_sinks = true;
    Model<double> model = cast_model<double>(random_model(config, 4));
    const TokenIds tokens = ids_of(2, 6, 32, 37), targets = ids_of(2, 6, 32, 38);
    ModelWeights<double> g = zero_gradients(model);
    const double loss = loss_and_gradients(model, tokens, targets, g);
    CHECK(loss == doctest::Approx(training_loss(model, tokens, targets)).epsilon(1e-14));
    const auto evaluate = [&] { return training_loss(model, tokens, targets); };
    for (std::size_t l = 0; l < model.weights.layers.size(); ++l) {
        CAPTURE(l);
        REQUIRE(g.layers[l].sinks.size() == 4);
        CHECK(xt::amax(xt::abs(g.layers[l].sinks))() > 0);
        CHECK(relative_error(model.weights.layers[l].sinks, g.layers[l].sinks, evaluate) < bound);
        CHECK(relative_error(model.weights.layers[l].wq, g.layers[l].wq, evaluate, 7) < bound);
        CHECK(relative_error(model.weights.layers[l].wv, g.layers[l].wv, evaluate, 7) < bound);
    }
    CHECK(relative_error(model.weights.embedding, g.embedding, evaluate, 7) < bound);
}

TEST_CASE("the comparison fails for a gradient wrong in one entry, or a KV gradient not summed over its group") {
    Model<double> model = cast_model<double>(random_model(tiny_config(), 3));
    const TokenIds tokens = ids_of(1, 5, 32, 29), targets = ids_of(1, 5, 32, 30);
    ModelWeights<double> g = zero_gradients(model);
    loss_and_gradients(model, tokens, targets, g);
    const auto evaluate = [&] { return training_loss(model, tokens, targets); };
    Matrix<double> wrong = g.layers[1].wk;
    wrong(3, 2) += 1e-3 * xt::amax(xt::abs(wrong))();
    CHECK(relative_error(model.weights.layers[1].wk, wrong, evaluate) > 1e-4);

    // dk from only the first query head of each group: what a copy per head, never summed back, gives.
    const std::size_t Hq = 4, T = 5, dh = 8;
    Tensor4<double> q({1, Hq, T, dh}), k({1, 2, T, dh}), w({1, Hq, T, T});
    fill_normal(q, 31), fill_normal(k, 32), fill_normal(w, 33);
    Tensor4<double> w_first = w;
    for (std::size_t h : {std::size_t(1), std::size_t(3)}) xt::view(w_first, 0, h) = 0;
    Tensor4<double> dk_first = xt::zeros<double>(k.shape());
    attention_scores_backward(q, k, w_first, dk_first);
    CHECK(relative_error(k, dk_first, [&] { return weighted_sum(w, attention_scores(q, k)); }) > 1e-2);
}
