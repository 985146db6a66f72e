// A tensor of normal draws from one seed: the random inputs of the benchmarks and tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <xtensor/xtensor.hpp>

#include "random.hpp"

namespace anatomy {

// `shape` filled in row-major order with scale * N(0, 1), one SplitMix64(seed).normal()
// per element, each drawn in double and rounded once to Real.
template <typename Real, std::size_t N>
xt::xtensor<Real, N> random_tensor(const std::array<std::size_t, N>& shape, std::uint64_t seed, double scale = 1.0) {
    SplitMix64 rng(seed);
    xt::xtensor<Real, N> out(shape);
    for (Real& value : out) value = static_cast<Real>(scale * rng.normal());
    return out;
}

}  // namespace anatomy
