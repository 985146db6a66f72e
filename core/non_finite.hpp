// Where an array holds a value that is not a number (NaN) or is infinite. A check
// that meets one never passes (verify/compare.hpp), and the reports name the first
// such value so that a user can find where it came from: a weight of the checkpoint
// (checkpoint/tensor_views.hpp), or the first tensor of a pass that holds one
// (verify/check_suite.hpp).
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace anatomy {

struct NonFinite {
    std::string tensor;               // its name, e.g. "layers.0.q" or "model.embed_tokens.weight"
    std::vector<std::size_t> index;   // of the first non-finite value, one entry per axis
    double value = 0;                 // NaN, +inf or -inf
    std::size_t count = 0;            // how many values of the tensor (or of every tensor scanned) are not finite
};

// The multi-index of flat position `flat` in a row-major array of `shape`.
inline std::vector<std::size_t> unravel_index(std::size_t flat, const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> index(shape.size());
    for (std::size_t axis = shape.size(); axis-- > 0;) {
        index[axis] = shape[axis] ? flat % shape[axis] : 0;
        flat = shape[axis] ? flat / shape[axis] : 0;
    }
    return index;
}

// The first non-finite value of `values` (n of them, row-major in `shape`), with the
// count of all of them; nothing when every value is finite.
template <typename Real>
std::optional<NonFinite> first_non_finite(const std::string& name, const Real* values, std::size_t n,
                                          const std::vector<std::size_t>& shape) {
    std::optional<NonFinite> found;
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isfinite(values[i])) continue;
        if (!found) found = NonFinite{name, unravel_index(i, shape), double(values[i]), 0};
        ++found->count;
    }
    return found;
}

// The same for an xtensor container.
template <typename Tensor>
std::optional<NonFinite> first_non_finite(const std::string& name, const Tensor& tensor) {
    return first_non_finite(name, tensor.data(), tensor.size(),
                            std::vector<std::size_t>(tensor.shape().begin(), tensor.shape().end()));
}

// "nan", "inf" or "-inf"
inline std::string non_finite_text(double value) { return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf"; }

// "layers.0.q [0, 1, 2, 5] = nan"
inline std::string describe(const NonFinite& where) {
    return where.tensor + " " + shape_text(where.index) + " = " + non_finite_text(where.value);
}

}  // namespace anatomy
