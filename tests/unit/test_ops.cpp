// Each operation against a closed-form fact.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <doctest/doctest.h>
#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include "model/random_tensor.hpp"
#include "ops/attention.hpp"
#include "ops/attention_kernels.hpp"
#include "ops/exponential.hpp"
#include "ops/embedding.hpp"
#include "ops/heads.hpp"
#include "ops/linear.hpp"
#include "ops/logits.hpp"
#include "ops/rms_norm.hpp"
#include "ops/rope.hpp"
#include "ops/swiglu.hpp"
#include "verify/compare.hpp"
#include "test_helpers.hpp"

using namespace anatomy;
using namespace anatomy::test;

TEST_CASE("RMSNorm of a constant vector c is sign(c) * scale") {
    // mean(c^2) = c^2, so y = c / sqrt(c^2 + eps) * w = sign(c) w (1 - eps / 2c^2 + ...).
    for (double c : {-3.0, 0.5, 2.0, 100.0}) {
        Tensor3<double> x = xt::ones<double>({2, 3, 8}) * c;
        Vector<double> scale = {1.0, 2.0, 0.5, -1.0, 3.0, 1.0, 1.0, 0.25};
        const Tensor3<double> y = rms_norm(x, scale, 1e-6);
        const double shrink = std::abs(c) / std::sqrt(c * c + 1e-6);
        for (std::size_t d = 0; d < 8; ++d) CHECK(y(1, 2, d) == doctest::Approx((c > 0 ? 1 : -1) * scale(d) * shrink).epsilon(1e-14));
    }
}

TEST_CASE("RMSNorm output has unit root mean square with a unit scale and does not subtract the mean") {
    const Tensor3<double> x = random_tensor<double, 3>({2, 4, 32}, 1) + 5.0;  // a large mean that must survive
    const Tensor3<double> y = rms_norm(x, Vector<double>(xt::ones<double>({32})), 0.0 + 1e-12);
    for (std::size_t t = 0; t < 4; ++t) {
        double sum_sq = 0, mean = 0;
        for (std::size_t d = 0; d < 32; ++d) sum_sq += y(0, t, d) * y(0, t, d), mean += y(0, t, d) / 32;
        CHECK(std::sqrt(sum_sq / 32) == doctest::Approx(1.0).epsilon(1e-12));
        CHECK(mean > 0.9);  // the mean was kept, only the scale changed
    }
}

TEST_CASE("RoPE at position 0 is the identity and every rotation preserves norms") {
    for (RopePairing pairing : {RopePairing::half_split, RopePairing::interleaved}) {
        const Tensor4<double> x = random_tensor<double, 4>({2, 3, 5, 8}, 2);
        const Tensor4<double> at_zero = apply_rope(x, {0, 0, 0, 0, 0}, 10000.0, pairing);
        CHECK(max_abs_diff(at_zero, x) == 0.0);

        const Tensor4<double> rotated = apply_rope(x, {0, 1, 7, 100, 4095}, 10000.0, pairing);
        for (std::size_t h = 0; h < 3; ++h)
            for (std::size_t t = 0; t < 5; ++t) {
                // Each pair keeps its own length, so the whole vector does too.
                for (int i = 0; i < 4; ++i) {
                    const auto [a, b] = rope_pair_channels(i, 8, pairing);
                    const double before = std::hypot(x(1, h, t, a), x(1, h, t, b));
                    const double after = std::hypot(rotated(1, h, t, a), rotated(1, h, t, b));
                    CHECK(after == doctest::Approx(before).epsilon(1e-12));
                }
            }
        CHECK(max_abs_diff(rotated, x) > 0.1);  // positions other than 0 really rotate
    }
}

TEST_CASE("RoPE pairs channels half-split (i, i + dh/2) or interleaved (2i, 2i + 1)") {
    CHECK(rope_pair_channels(0, 8, RopePairing::half_split) == std::pair{0, 4});
    CHECK(rope_pair_channels(3, 8, RopePairing::half_split) == std::pair{3, 7});
    CHECK(rope_pair_channels(0, 8, RopePairing::interleaved) == std::pair{0, 1});
    CHECK(rope_pair_channels(3, 8, RopePairing::interleaved) == std::pair{6, 7});

    // Pair 0 turns by exactly the position in radians (theta^0 = 1): check one rotation by hand.
    Tensor4<double> x = xt::zeros<double>({1, 1, 1, 8});
    x(0, 0, 0, 0) = 1.0;  // unit vector along the first channel of pair 0
    const Tensor4<double> r = apply_rope(x, {3}, 10000.0, RopePairing::half_split);
    CHECK(r(0, 0, 0, 0) == doctest::Approx(std::cos(3.0)));
    CHECK(r(0, 0, 0, 4) == doctest::Approx(std::sin(3.0)));
}

TEST_CASE("RoPE angles follow p * theta^(-2i/dh)") {
    const Matrix<double> angles = rope_angles({0, 1, 5}, 8, 10000.0);
    CHECK(angles.shape(0) == 3);
    CHECK(angles.shape(1) == 4);
    for (int i = 0; i < 4; ++i) CHECK(angles(2, i) == doctest::Approx(5.0 * std::pow(10000.0, -2.0 * i / 8)));
}

TEST_CASE("softmax is unchanged by adding a constant to a row, survives large values and -inf") {
    const Tensor4<double> x = random_tensor<double, 4>({1, 2, 3, 7}, 3);
    const Tensor4<double> p = softmax_rows(x);
    CHECK(max_abs_diff(softmax_rows(Tensor4<double>(x + 1000.0)), p) < 1e-12);
    CHECK(max_abs_diff(softmax_rows(Tensor4<double>(x - 1000.0)), p) < 1e-12);

    Tensor4<float> big = {{{{1000.0f, 999.0f, -std::numeric_limits<float>::infinity()}}}};
    const Tensor4<float> q = softmax_rows(big);
    CHECK(q(0, 0, 0, 0) == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))));
    CHECK(q(0, 0, 0, 2) == 0.0f);
    CHECK(std::isfinite(q(0, 0, 0, 1)));

    Tensor4<float> empty = xt::ones<float>({1, 1, 1, 3}) * -std::numeric_limits<float>::infinity();
    const Tensor4<float> z = softmax_rows(empty);
    CHECK(xt::all(xt::equal(z, 0.0f)));  // a row with no visible key is zeros, not NaN
}

TEST_CASE("the causal mask is the lower triangle, shifted right by the cached history") {
    const Mask square = causal_mask(4, 4);
    for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t s = 0; s < 4; ++s) CHECK(square(t, s) == (s <= t));

    // 2 new tokens after 3 cached ones: the seed's tril(diagonal = S - T) example.
    const Mask shifted = causal_mask(2, 5);
    const int expected[2][5] = {{1, 1, 1, 1, 0}, {1, 1, 1, 1, 1}};
    for (std::size_t t = 0; t < 2; ++t)
        for (std::size_t s = 0; s < 5; ++s) CHECK(shifted(t, s) == expected[t][s]);

    // Decode (T = 1): the new token sees every key.
    CHECK(xt::all(xt::equal(causal_mask(1, 9), std::uint8_t(1))));
    CHECK_THROWS_AS(causal_mask(3, 2), InputError);
}

TEST_CASE("masked cells get exactly zero probability and rows still sum to one") {
    const Tensor4<double> scores = random_tensor<double, 4>({1, 1, 4, 6}, 4, 3.0);
    const Tensor4<double> p = softmax_rows(apply_mask(scores, causal_mask(4, 6)));
    for (std::size_t t = 0; t < 4; ++t) {
        double sum = 0;
        for (std::size_t s = 0; s < 6; ++s) {
            if (s > t + 2) CHECK(p(0, 0, t, s) == 0.0);
            sum += p(0, 0, t, s);
        }
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-14));
    }
}

TEST_CASE("attention scores are q.k / sqrt(dh) with query head h reading KV head h / group") {
    const Tensor4<double> q = random_tensor<double, 4>({2, 4, 3, 8}, 5);
    const Tensor4<double> k = random_tensor<double, 4>({2, 2, 5, 8}, 6);
    const Tensor4<double> scores = attention_scores(q, k);  // [2, 4, 3, 5]
    for (std::size_t h = 0; h < 4; ++h) {
        double dot = 0;
        for (std::size_t d = 0; d < 8; ++d) dot += q(1, h, 2, d) * k(1, h / 2, 4, d);
        CHECK(scores(1, h, 2, 4) == doctest::Approx(dot / std::sqrt(8.0)).epsilon(1e-14));
    }
    // The grouped index equals running on explicitly repeated heads.
    CHECK(max_abs_diff(attention_scores(q, repeat_kv(k, 2)), scores) == 0.0);
    const Tensor4<double> v = random_tensor<double, 4>({2, 2, 5, 8}, 7);
    const Tensor4<double> p = softmax_rows(scores);
    CHECK(max_abs_diff(weighted_values(p, v), weighted_values(p, repeat_kv(v, 2))) == 0.0);
    CHECK_THROWS_AS(attention_scores(q, Tensor4<double>(random_tensor<double, 4>({2, 3, 5, 8}, 8))), InputError);
}

TEST_CASE("weighted values with a one-hot row copy that value vector") {
    Tensor4<double> p = xt::zeros<double>({1, 2, 1, 4});
    p(0, 0, 0, 2) = 1.0;
    p(0, 1, 0, 3) = 1.0;
    const Tensor4<double> v = random_tensor<double, 4>({1, 1, 4, 8}, 9);
    const Tensor4<double> out = weighted_values(p, v);
    for (std::size_t d = 0; d < 8; ++d) {
        CHECK(out(0, 0, 0, d) == v(0, 0, 2, d));
        CHECK(out(0, 1, 0, d) == v(0, 0, 3, d));
    }
}

// The attention steps as four plain loops, each sum in the order the core promises
// (over d for a score, over s for a row's total and a weighted sum), written apart
// from the core: its reference steps and its vectorised ones must give these bits exactly.
template <typename Real>
struct PlainAttention {
    Tensor4<Real> scores, masked, probs, out;
};

template <typename Real>
PlainAttention<Real> plain_attention(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& v, const Mask& allowed) {
    const std::size_t B = q.shape(0), Hq = q.shape(1), T = q.shape(2), dh = q.shape(3), S = k.shape(2);
    const std::size_t group = Hq / k.shape(1);
    const Real scale = Real(1.0 / std::sqrt(double(dh)));
    PlainAttention<Real> r{Tensor4<Real>({B, Hq, T, S}), Tensor4<Real>({B, Hq, T, S}), Tensor4<Real>({B, Hq, T, S}),
                           Tensor4<Real>({B, Hq, T, dh})};
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h)
            for (std::size_t t = 0; t < T; ++t) {
                for (std::size_t s = 0; s < S; ++s) {
                    Real dot = 0;
                    for (std::size_t d = 0; d < dh; ++d) dot += q(b, h, t, d) * k(b, h / group, s, d);
                    r.scores(b, h, t, s) = dot * scale;
                    r.masked(b, h, t, s) = allowed(t, s) ? r.scores(b, h, t, s) : -std::numeric_limits<Real>::infinity();
                }
                std::size_t end = S;  // past the row's last allowed key every weight is 0
                while (end > 0 && !allowed(t, end - 1)) --end;
                Real row_max = -std::numeric_limits<Real>::infinity(), sum = 0;
                for (std::size_t s = 0; s < end; ++s) row_max = std::max(row_max, r.masked(b, h, t, s));
                for (std::size_t s = 0; s < S; ++s) r.probs(b, h, t, s) = s < end ? exponential(r.masked(b, h, t, s) - row_max) : 0;
                for (std::size_t s = 0; s < end; ++s) sum += r.probs(b, h, t, s);
                for (std::size_t s = 0; s < end; ++s) r.probs(b, h, t, s) /= sum;
                for (std::size_t d = 0; d < dh; ++d) {
                    Real acc = 0;
                    for (std::size_t s = 0; s < end; ++s) acc += r.probs(b, h, t, s) * v(b, h / group, s, d);
                    r.out(b, h, t, d) = acc;
                }
            }
    return r;
}

TEST_CASE("the reference attention steps and the vectorised ones give the bits of plain in-order loops") {
    // Sizes that leave every vector loop a tail: S = 21 keys (not a multiple of 8 or
    // 16), T = 7 queries (not a multiple of 4), head size 12 (one full and one partial
    // group of 8 channels); the mask has holes, a fully masked row and a causal tail.
    const std::size_t T = 7, S = 21, dh = 12;
    Mask allowed({T, S});
    SplitMix64 coin(41);
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t s = 0; s < S; ++s) allowed(t, s) = s <= t + S - T && coin.uniform() < 0.7;
    for (std::size_t s = 0; s < S; ++s) allowed(3, s) = 0;  // a row with no visible key
    const Tensor4<float> q = random_tensor<double, 4>({2, 4, T, dh}, 42);
    const Tensor4<float> k = random_tensor<double, 4>({2, 2, S, dh}, 43, 3.0);
    const Tensor4<float> v = random_tensor<double, 4>({2, 2, S, dh}, 44);
    const PlainAttention<float> plain = plain_attention(q, k, v, allowed);

    // The reference steps (ops/attention.cpp) and the vectorised ones the model runs.
    const Tensor4<float> scores = attention_scores(q, k), scores_fast = attention_scores_fast(q, k);
    const Tensor4<float> masked = apply_mask(scores, allowed), masked_fast = apply_mask_fast(scores, allowed);
    const Tensor4<float> probs = softmax_rows(masked), probs_fast = softmax_rows_fast(masked);
    CHECK(same_bits(scores, plain.scores));
    CHECK(same_bits(scores_fast, plain.scores));
    CHECK(same_bits(masked, plain.masked));
    CHECK(same_bits(masked_fast, plain.masked));
    CHECK(same_bits(probs, plain.probs));
    CHECK(same_bits(probs_fast, plain.probs));
    CHECK(same_bits(weighted_values(probs, v), plain.out));
    CHECK(same_bits(weighted_values_fast(probs, v), plain.out));
    // The check can fail: one weight moved by a thousandth changes the weighted sum's bits.
    Tensor4<float> nudged = probs;
    nudged(1, 2, 6, 15) += 1e-3f;
    REQUIRE(allowed(6, 15));
    CHECK_FALSE(same_bits(weighted_values(nudged, v), plain.out));
    CHECK_FALSE(same_bits(weighted_values_fast(nudged, v), plain.out));

    const Tensor4<double> q64 = random_tensor<double, 4>({1, 2, T, dh}, 45), k64 = random_tensor<double, 4>({1, 1, S, dh}, 46);
    const Tensor4<double> v64 = random_tensor<double, 4>({1, 1, S, dh}, 47);
    const PlainAttention<double> plain64 = plain_attention(q64, k64, v64, allowed);
    const Tensor4<double> probs64 = softmax_rows(apply_mask(attention_scores(q64, k64), allowed));
    const Tensor4<double> probs64_fast = softmax_rows_fast(apply_mask_fast(attention_scores_fast(q64, k64), allowed));
    CHECK(same_bits(probs64, plain64.probs));
    CHECK(same_bits(probs64_fast, plain64.probs));
    CHECK(same_bits(weighted_values(probs64, v64), plain64.out));
    CHECK(same_bits(weighted_values_fast(probs64, v64), plain64.out));
}

TEST_CASE("split_heads puts channel h*dh + d of position t at [h, t, d], and merge_heads undoes it") {
    const Tensor3<double> x = random_tensor<double, 3>({2, 5, 12}, 10);
    const Tensor4<double> heads = split_heads(x, 3);  // [2, 3, 5, 4]
    REQUIRE(heads.shape() == std::array<std::size_t, 4>{2, 3, 5, 4});
    for (std::size_t h = 0; h < 3; ++h)
        for (std::size_t t = 0; t < 5; ++t)
            for (std::size_t d = 0; d < 4; ++d) CHECK(heads(1, h, t, d) == x(1, t, h * 4 + d));
    CHECK(max_abs_diff(merge_heads(heads), x) == 0.0);
}

TEST_CASE("linear is x @ W and tied logits are x @ E^T") {
    const Tensor3<double> x = random_tensor<double, 3>({2, 3, 4}, 11);
    const Matrix<double> w = random_tensor<double, 2>({4, 5}, 12);
    const Tensor3<double> y = linear(x, w);
    for (std::size_t j = 0; j < 5; ++j) {
        double expected = 0;
        for (std::size_t i = 0; i < 4; ++i) expected += x(1, 2, i) * w(i, j);
        CHECK(y(1, 2, j) == doctest::Approx(expected).epsilon(1e-14));
    }
    const Matrix<double> e = random_tensor<double, 2>({6, 4}, 13);
    CHECK(max_abs_diff(tied_logits(x, e), linear(x, Matrix<double>(xt::transpose(e)))) < 1e-14);
}

TEST_CASE("SwiGLU gates the up projection with silu of the gate projection") {
    CHECK(silu(Tensor3<double>({{{0.0}}}))(0, 0, 0) == 0.0);
    CHECK(silu(Tensor3<double>({{{2.0}}}))(0, 0, 0) == doctest::Approx(2.0 / (1.0 + std::exp(-2.0))));
    const Tensor3<double> x = random_tensor<double, 3>({1, 2, 4}, 14);
    const Matrix<double> wg = random_tensor<double, 2>({4, 6}, 15), wu = random_tensor<double, 2>({4, 6}, 16), wd = random_tensor<double, 2>({6, 4}, 17);
    const Tensor3<double> expected = linear(Tensor3<double>(silu(linear(x, wg)) * linear(x, wu)), wd);
    CHECK(max_abs_diff(swiglu(x, wg, wu, wd), expected) == 0.0);
    // A zero gate closes the sublayer whatever the up branch says.
    CHECK(max_abs_diff(swiglu(x, Matrix<double>(xt::zeros<double>({4, 6})), wu, wd), Tensor3<double>(xt::zeros<double>({1, 2, 4}))) == 0.0);
}

TEST_CASE("embedding looks rows up and rejects ids outside the vocabulary") {
    const Matrix<double> table = random_tensor<double, 2>({5, 3}, 18);
    const TokenIds ids = {{4, 0, 4}};
    const Tensor3<double> x = embed(table, ids);
    for (std::size_t d = 0; d < 3; ++d) {
        CHECK(x(0, 0, d) == table(4, d));
        CHECK(x(0, 2, d) == table(4, d));  // the same id gives the same row
        CHECK(x(0, 1, d) == table(0, d));
    }
    CHECK_THROWS_AS(embed(table, TokenIds({{5}})), InputError);
    CHECK_THROWS_AS(embed(table, TokenIds({{-1}})), InputError);
}

// The float `steps` floats above x, as `steps` calls of std::nextafter(x, +inf) would
// give: the bits of the floats in order, with -0 and +0 one value.
float float_steps_above(float x, int steps) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, 4);
    const std::int64_t magnitude = bits & 0x7FFFFFFFu;
    const std::int64_t order = (bits >> 31 ? -magnitude : magnitude) + steps;
    const std::uint32_t next = order < 0 ? std::uint32_t(-order) | 0x80000000u : std::uint32_t(order);
    float y;
    std::memcpy(&y, &next, 4);
    return y;
}

TEST_CASE("float_steps_above steps as nextafter does, across zero") {
    for (float x : {-87.0f, -1e-44f, -0.0f, 0.0f, 1.0f, 88.0f}) {
        float stepped = x;
        for (int k = 0; k < 997; ++k) stepped = std::nextafter(stepped, INFINITY);
        CHECK(float_steps_above(x, 997) == stepped);
        CHECK(std::signbit(float_steps_above(x, 997)) == std::signbit(stepped));
    }
}

TEST_CASE("exponential: within 2 ulp of e^x over softmax's range, 0 below it, and the same bits everywhere") {
    // Every 997th float from -87 to 88.6, against e^x in double rounded to float.
    double worst_ulp = 0;
    for (float x = -87.0f; x <= 88.6f; x = float_steps_above(x, 997)) {
        const double truth = std::exp(double(x));
        const float near = float(truth);
        const double ulp = double(std::nextafter(near, INFINITY)) - double(near);
        worst_ulp = std::max(worst_ulp, std::fabs(double(exponential(x)) - truth) / ulp);
    }
    CHECK(worst_ulp < 2.0);
    CHECK(exponential(0.0f) == 1.0f);
    CHECK(exponential(-INFINITY) == 0.0f);  // a masked score
    CHECK(exponential(-100.0f) == 0.0f);
    CHECK(std::isinf(exponential(100.0f)));
    CHECK(std::isnan(exponential(NAN)));
    // A polynomial one term short (to r^6) is measurably worse: the sweep above can fail.
    const float r = 0.34f;
    float p6 = 1.0f / 720.0f;
    for (float c : {1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f}) p6 = p6 * r + c;
    CHECK(std::fabs(double(p6) - std::exp(double(r))) / double(std::exp(double(r))) > 2e-8);
}
