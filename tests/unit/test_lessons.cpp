// The formulas and small computations behind the chapters' widgets.
#include <cmath>

#include <doctest/doctest.h>

#include "lessons/cost.hpp"
#include "lessons/soft_lookup.hpp"

using namespace anatomy;

TEST_CASE("attention cost reproduces the chapter's worked numbers for d = T = 4096") {
    const AttentionFlops f = prefill_flops(4096, 4096, 32, 32);
    CHECK(f.projections == 549755813888.0);             // 8 T d^2
    CHECK(f.scores + f.weighted == 274877906944.0);     // 4 T^2 d
    CHECK(crossover_length(4096, 32, 32) == 8192.0);    // T = 2d
    // At the crossover the two really are equal.
    const AttentionFlops at = prefill_flops(4096, 8192, 32, 32);
    CHECK(at.scores + at.weighted == at.projections);
}

TEST_CASE("grouped-query attention shrinks the K and V projections and the crossover") {
    const AttentionFlops mha = prefill_flops(2048, 1000, 32, 32), gqa = prefill_flops(2048, 1000, 32, 4);
    CHECK(gqa.scores == mha.scores);  // every query head still scores every key
    CHECK(gqa.projections == 2.0 * 1000 * 2048 * (2 * 2048 + 2 * 256));
    CHECK(crossover_length(2048, 32, 4) == 2048 + 256);
    // Decode reads the whole cache for one query: attention grows with S, projections do not.
    CHECK(decode_flops(2048, 8000, 32, 4).projections == decode_flops(2048, 16000, 32, 4).projections);
    CHECK(decode_flops(2048, 16000, 32, 4).scores == 2 * decode_flops(2048, 8000, 32, 4).scores);
    CHECK(decode_cache_bytes(2048, 1000, 32, 4, 2) == 2.0 * 1000 * 256 * 2);
}

TEST_CASE("a soft lookup turns into a hard lookup as the scale grows, and into an average as it shrinks") {
    const Vector<double> query = {1.0, 0.0};
    const Matrix<double> keys = {{1.0, 0.0}, {0.0, 1.0}, {-1.0, 0.0}};
    const Matrix<double> values = {{10.0}, {20.0}, {30.0}};
    const SoftLookup sharp = soft_lookup(query, keys, values, 50.0);
    CHECK(sharp.weights(0) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(sharp.mixed(0) == doctest::Approx(10.0));
    const SoftLookup flat = soft_lookup(query, keys, values, 1e-9);
    CHECK(flat.mixed(0) == doctest::Approx(20.0));  // the plain mean of the values
    const SoftLookup mid = soft_lookup(query, keys, values, 1.0);
    CHECK(mid.weights(0) + mid.weights(1) + mid.weights(2) == doctest::Approx(1.0));
    CHECK(mid.weights(0) / mid.weights(1) == doctest::Approx(std::exp(1.0)));  // scores differ by 1
    CHECK_THROWS_AS(soft_lookup(query, keys, values, 0.0), InputError);
}
