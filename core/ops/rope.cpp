#include "rope.hpp"

#include <cmath>
#include <string>

#include <xtensor/xmath.hpp>

namespace anatomy {

std::string to_string(RopePairing pairing) {
    return pairing == RopePairing::half_split ? "half_split" : "interleaved";
}

RopePairing rope_pairing_from_string(std::string_view text) {
    if (text == "half_split") return RopePairing::half_split;
    if (text == "interleaved") return RopePairing::interleaved;
    throw InputError("unknown RoPE pairing '" + std::string(text) +
                     "' (expected half_split or interleaved)");
}

// [anatomy:rope]
Matrix<double> rope_angles(const std::vector<std::int64_t>& positions, int head_dim, double theta) {
    const std::size_t T = positions.size(), half = std::size_t(head_dim) / 2;
    Matrix<double> angles({T, half});
    for (std::size_t i = 0; i < half; ++i) {
        const double inv_freq = std::pow(theta, -2.0 * double(i) / double(head_dim));
        for (std::size_t t = 0; t < T; ++t) angles(t, i) = double(positions[t]) * inv_freq;
    }
    return angles;
}

std::pair<int, int> rope_pair_channels(int i, int head_dim, RopePairing pairing) {
    if (pairing == RopePairing::half_split) return {i, i + head_dim / 2};
    return {2 * i, 2 * i + 1};
}

template <typename Real>
Tensor4<Real> apply_rope(const Tensor4<Real>& x, const std::vector<std::int64_t>& positions, double theta,
                         RopePairing pairing) {
    const std::size_t B = x.shape(0), H = x.shape(1), T = x.shape(2), dh = x.shape(3);
    if (positions.size() != T) throw InputError("apply_rope: one position per token is required");
    const Matrix<double> angles = rope_angles(positions, int(dh), theta);  // [T, dh/2]
    const Matrix<Real> cos_table = xt::cast<Real>(xt::cos(angles));         // [T, dh/2]
    const Matrix<Real> sin_table = xt::cast<Real>(xt::sin(angles));         // [T, dh/2]
    const std::size_t half = dh / 2;

    Tensor4<Real> out(x.shape());
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t t = 0; t < T; ++t) {
                const Real* in = &x(b, h, t, 0);
                Real* rot = &out(b, h, t, 0);
                for (std::size_t i = 0; i < half; ++i) {
                    const auto [first, second] = rope_pair_channels(int(i), int(dh), pairing);
                    const Real c = cos_table(t, i), s = sin_table(t, i);
                    const Real a = in[first], bb = in[second];
                    rot[first] = a * c - bb * s;
                    rot[second] = a * s + bb * c;
                }
            }
    return out;
}
// [/anatomy:rope]

template <typename Real>
Tensor4<Real> apply_rope_backward(const Tensor4<Real>& dy, const std::vector<std::int64_t>& positions, double theta,
                                  RopePairing pairing) {
    std::vector<std::int64_t> negated(positions.size());  // angle(-p) = -angle(p): the inverse turn
    for (std::size_t t = 0; t < positions.size(); ++t) negated[t] = -positions[t];
    return apply_rope(dy, negated, theta, pairing);
}

template Tensor4<float> apply_rope_backward(const Tensor4<float>&, const std::vector<std::int64_t>&, double, RopePairing);
template Tensor4<double> apply_rope_backward(const Tensor4<double>&, const std::vector<std::int64_t>&, double, RopePairing);

template Tensor4<float> apply_rope(const Tensor4<float>&, const std::vector<std::int64_t>&, double, RopePairing);
template Tensor4<double> apply_rope(const Tensor4<double>&, const std::vector<std::int64_t>&, double, RopePairing);

}  // namespace anatomy
