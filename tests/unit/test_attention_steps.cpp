// The reference attention steps (ops/attention.cpp, plain loops) against the
// vectorised steps the model runs (v4, ops/attention_fast_steps.cpp): the same bits,
// step by step, on every mask kind masks.hpp defines and on the shapes the check
// suite and the model use (the tiny preset's GQA, MHA, one KV head, a cache history,
// a single decode query, sizes that leave every vector loop a tail), fp32 and fp64.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "masks.hpp"
#include "model/random.hpp"
#include "model/random_tensor.hpp"
#include "ops/attention.hpp"
#include "ops/attention_kernels.hpp"
#include "test_helpers.hpp"

using namespace anatomy;
using namespace anatomy::test;

namespace {

struct Shape {
    const char* what;
    std::size_t B, Hq, Hkv, T, S, dh;
};

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> all{
        {"tiny preset, whole sequence", 2, 4, 2, 11, 11, 8},
        {"tiny preset, 3 new tokens after 8 cached", 2, 4, 2, 3, 11, 8},
        {"one decode query after 20 cached", 1, 4, 2, 1, 21, 8},
        {"multi-head (Hkv = Hq)", 1, 3, 3, 9, 9, 12},
        {"one KV head for 4 query heads", 1, 4, 1, 7, 13, 16},
        {"TinyLlama's group of 8, head size 64", 1, 8, 1, 17, 40, 64},
        {"sizes off every vector width", 3, 2, 1, 5, 37, 5},
    };
    return all;
}

// Each mask kind at its own settings, for T queries over S keys.
std::vector<MaskSpec> masks_for(std::size_t T, std::size_t S) {
    std::vector<MaskSpec> specs;
    for (const MaskKind kind : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::sink_window,
                                MaskKind::prefix_lm, MaskKind::document, MaskKind::chunked}) {
        MaskSpec spec;
        spec.kind = kind, spec.T = std::int64_t(T), spec.S = std::int64_t(S);
        spec.window = 3, spec.sinks = 2, spec.prefix = std::int64_t(S / 2), spec.chunk = 4;
        if (kind == MaskKind::document) spec.document_lengths = {std::int64_t(S / 3), std::int64_t(S - S / 3)};
        if (kind == MaskKind::document && S / 3 == 0) spec.document_lengths = {std::int64_t(S)};
        REQUIRE_MESSAGE(mask_problem(spec).empty(), mask_kind_name(kind), ": ", mask_problem(spec));
        specs.push_back(spec);
    }
    return specs;
}

Mask mask_of(const MaskSpec& spec) {
    Mask allowed({std::size_t(spec.T), std::size_t(spec.S)});
    for (std::int64_t t = 0; t < spec.T; ++t)
        for (std::int64_t s = 0; s < spec.S; ++s) allowed(std::size_t(t), std::size_t(s)) = mask_allows(spec, t, s);
    return allowed;
}

// Every step of both versions on one shape and mask; returns how many tensors differ.
template <typename Real>
int steps_that_differ(const Shape& c, const Mask& allowed, std::uint64_t seed) {
    const Tensor4<Real> q = random_tensor<double, 4>({c.B, c.Hq, c.T, c.dh}, seed);
    const Tensor4<Real> k = random_tensor<double, 4>({c.B, c.Hkv, c.S, c.dh}, seed + 1, 3.0);  // wide scores: a peaked softmax
    const Tensor4<Real> v = random_tensor<double, 4>({c.B, c.Hkv, c.S, c.dh}, seed + 2);

    const Tensor4<Real> scores = attention_scores(q, k), scores_fast = attention_scores_fast(q, k);
    const Tensor4<Real> masked = apply_mask(scores, allowed), masked_fast = apply_mask_fast(scores, allowed);
    const Tensor4<Real> probs = softmax_rows(masked), probs_fast = softmax_rows_fast(masked);
    const Tensor4<Real> out = weighted_values(probs, v), out_fast = weighted_values_fast(probs, v);
    // With a sink logit per head (one of them far above every score, one far below).
    Vector<Real> sinks = random_tensor<double, 1>({c.Hq}, seed + 3, 2.0);
    sinks(0) = Real(40), sinks(c.Hq - 1) = Real(-40);
    const Tensor4<Real> sunk = softmax_rows_with_sinks(masked, sinks), sunk_fast = softmax_rows_with_sinks_fast(masked, sinks);
    std::size_t nan_values = 0;  // finite inputs: a NaN anywhere is a fault of either version
    for (const auto* t : {&scores, &scores_fast, &masked, &probs, &probs_fast, &out, &out_fast, &sunk, &sunk_fast})
        for (std::size_t i = 0; i < t->size(); ++i) nan_values += std::isnan(t->data()[i]);
    REQUIRE(nan_values == 0);
    return !same_bits(scores, scores_fast) + !same_bits(masked, masked_fast) + !same_bits(probs, probs_fast) +
           !same_bits(out, out_fast) + !same_bits(sunk, sunk_fast);
}

}  // namespace

TEST_CASE("the vectorised steps the model runs give the reference's bits on every mask kind and shape") {
    std::uint64_t seed = 100;
    int cases = 0;
    for (const Shape& c : shapes())
        for (const MaskSpec& spec : masks_for(c.T, c.S)) {
            CAPTURE(c.what);
            const std::string kind = mask_kind_name(spec.kind);
            CAPTURE(kind);
            const Mask allowed = mask_of(spec);
            CHECK(steps_that_differ<float>(c, allowed, seed) == 0);
            CHECK(steps_that_differ<double>(c, allowed, seed) == 0);
            seed += 3, ++cases;
        }
    CHECK(cases == int(shapes().size()) * 7);
}

TEST_CASE("a fully masked row is zeros in both versions, and a NaN score is NaN in both") {
    const Shape c{"", 1, 2, 1, 4, 9, 8};
    Mask allowed = causal_mask(c.T, c.S);
    for (std::size_t s = 0; s < c.S; ++s) allowed(2, s) = 0;  // query 2 sees nothing
    CHECK(steps_that_differ<float>(c, allowed, 7) == 0);
    const Tensor4<float> probs = softmax_rows_fast(apply_mask_fast(attention_scores_fast(
        Tensor4<float>(random_tensor<double, 4>({1, 2, 4, 8}, 7)), Tensor4<float>(random_tensor<double, 4>({1, 1, 9, 8}, 8, 3.0))), allowed));
    for (std::size_t s = 0; s < c.S; ++s) CHECK(probs(0, 1, 2, s) == 0.0f);

    Tensor4<float> scores = attention_scores(Tensor4<float>(random_tensor<double, 4>({1, 1, 2, 8}, 9)),
                                             Tensor4<float>(random_tensor<double, 4>({1, 1, 5, 8}, 10)));
    scores(0, 0, 1, 0) = std::numeric_limits<float>::quiet_NaN();
    const Tensor4<float> reference = softmax_rows(scores), fast = softmax_rows_fast(scores);
    for (std::size_t s = 0; s < 5; ++s) CHECK((std::isnan(reference(0, 0, 1, s)) && std::isnan(fast(0, 0, 1, s))));
    for (std::size_t s = 0; s < 5; ++s) CHECK(reference(0, 0, 0, s) == fast(0, 0, 0, s));  // the other row is untouched
}

TEST_CASE("the comparison can fail: a fast step given other inputs differs from the reference") {
    const Shape c = shapes()[0];
    const Tensor4<float> q = random_tensor<double, 4>({c.B, c.Hq, c.T, c.dh}, 1);
    const Tensor4<float> k = random_tensor<double, 4>({c.B, c.Hkv, c.S, c.dh}, 2);
    Tensor4<float> k_nudged = k;
    k_nudged(1, 1, 4, 3) += 1e-4f;  // one channel of one key
    CHECK(same_bits(attention_scores(q, k), attention_scores_fast(q, k)));
    CHECK_FALSE(same_bits(attention_scores(q, k), attention_scores_fast(q, k_nudged)));
}

TEST_CASE("softmax with sinks: each row sums to one minus the sink's share, as the closed form says") {
    // One head, one query, keys with scores 0 and ln 2, a sink logit of ln 3: e^z = 1, 2 and 3,
    // so the keys get 1/6 and 2/6 and the sink keeps 3/6.
    Tensor4<double> scores({1, 2, 1, 2});
    scores(0, 0, 0, 0) = 0, scores(0, 0, 0, 1) = std::log(2.0);
    scores(0, 1, 0, 0) = 0, scores(0, 1, 0, 1) = 0;
    Vector<double> sinks = xt::zeros<double>({std::size_t(2)});
    sinks(0) = std::log(3.0), sinks(1) = -std::numeric_limits<double>::max();  // head 1: a sink that takes nothing
    for (const Tensor4<double>& p : {softmax_rows_with_sinks(scores, sinks), softmax_rows_with_sinks_fast(scores, sinks)}) {
        CHECK(p(0, 0, 0, 0) == doctest::Approx(1.0 / 6).epsilon(1e-15));
        CHECK(p(0, 0, 0, 1) == doctest::Approx(2.0 / 6).epsilon(1e-15));
        CHECK(p(0, 1, 0, 0) == 0.5);  // no share for the sink: the plain softmax
        CHECK(p(0, 1, 0, 1) == 0.5);
    }
    // Every key masked: the sink takes the whole row, and the keys get 0, not NaN.
    Tensor4<float> masked({1, 1, 1, 3});
    masked.fill(-std::numeric_limits<float>::infinity());
    Vector<float> one = xt::zeros<float>({std::size_t(1)});
    one(0) = 0.25f;
    for (const Tensor4<float>& p : {softmax_rows_with_sinks(masked, one), softmax_rows_with_sinks_fast(masked, one)})
        for (std::size_t s = 0; s < 3; ++s) CHECK(p(0, 0, 0, s) == 0.0f);
    CHECK_THROWS_AS(softmax_rows_with_sinks(masked, Vector<float>(xt::zeros<float>({std::size_t(2)}))), InputError);
}
