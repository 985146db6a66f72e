// Array types used throughout the core. Every buffer is a dense, row-major
// xtensor with a fixed rank; the shape of each one is written where it is made.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace anatomy {

template <typename Real> using Vector = xt::xtensor<Real, 1>;
template <typename Real> using Matrix = xt::xtensor<Real, 2>;
template <typename Real> using Tensor3 = xt::xtensor<Real, 3>;
template <typename Real> using Tensor4 = xt::xtensor<Real, 4>;

// Token ids for a batch of equally long sequences: [B, T].
using TokenIds = xt::xtensor<std::int32_t, 2>;

// A shape as text, e.g. "[2, 3, 5]": the one formatter of every shape in a message.
inline std::string shape_text(const std::vector<std::size_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

// Raised where bad input enters the core (a token out of range, an inconsistent
// config, a malformed checkpoint). The message is meant for the user.
struct InputError : std::runtime_error {
    explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace anatomy
