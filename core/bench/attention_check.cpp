#include "attention_check.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

#include "../ops/attention_kernels.hpp"
#include "harness.hpp"

namespace anatomy {
namespace {

// x[:, :, t0 .. t1, :] as a typed container.   [B, H, N, dh]  ->  [B, H, t1 - t0, dh]
template <typename To>
Tensor4<To> rows_of(const Tensor4<float>& x, std::size_t t0, std::size_t t1) {
    return Tensor4<To>(xt::cast<To>(xt::view(x, xt::all(), xt::all(), xt::range(t0, t1), xt::all())));
}

std::vector<std::size_t> sample_rows(std::size_t T, std::size_t max_rows) {
    std::vector<std::size_t> rows;
    if (T <= max_rows) {
        for (std::size_t t = 0; t < T; ++t) rows.push_back(t);
        return rows;
    }
    for (std::size_t i = 0; i < max_rows; ++i) rows.push_back(i * (T - 1) / (max_rows - 1));  // 0 .. T-1
    return rows;
}

}  // namespace

ReferenceRows reference_rows(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                             std::size_t max_rows) {
    check_attention_shapes(q.shape(), k.shape(), v.shape());
    const std::size_t T = q.shape(2), S = k.shape(2), history = S - T;
    ReferenceRows ref;
    ref.rows = sample_rows(T, std::max<std::size_t>(max_rows, 2));
    for (std::size_t t : ref.rows) {
        const std::size_t n = t + history + 1;  // keys row t may see
        const Tensor4<float> q_t = rows_of<float>(q, t, t + 1), k_t = rows_of<float>(k, 0, n),
                             v_t = rows_of<float>(v, 0, n);
        const Tensor4<double> exact = attention_reference(rows_of<double>(q, t, t + 1), rows_of<double>(k, 0, n),
                                                          rows_of<double>(v, 0, n));  // [B, Hq, 1, dh]
        const Tensor4<float> fp32 = attention_reference(q_t, k_t, v_t);
        for (std::size_t i = 0; i < exact.size(); ++i)
            ref.fp32_error = std::max(ref.fp32_error, std::abs(double(fp32.data()[i]) - exact.data()[i]));
        ref.fp64.push_back(exact);
    }
    return ref;
}

Validation validate_rows(const Tensor4<float>& out, const ReferenceRows& reference) {
    Validation result;
    result.reference_error = reference.fp32_error;
    result.tolerance = attention_tolerance(reference.fp32_error, kCpuToleranceFloor);
    bool finite = true;
    for (std::size_t i = 0; i < reference.rows.size(); ++i) {
        const std::size_t t = reference.rows[i];
        const Tensor4<double>& exact = reference.fp64[i];  // [B, Hq, 1, dh]
        if (t >= out.shape(2) || exact.shape(0) != out.shape(0) || exact.shape(1) != out.shape(1) ||
            exact.shape(3) != out.shape(3))
            return result;  // wrong shape: not passed
        for (std::size_t b = 0; b < out.shape(0); ++b)
            for (std::size_t h = 0; h < out.shape(1); ++h)
                for (std::size_t d = 0; d < out.shape(3); ++d) {
                    const double got = out(b, h, t, d);
                    finite = finite && std::isfinite(got);
                    result.max_error = std::max(result.max_error, std::abs(got - exact(b, h, 0, d)));
                }
        ++result.rows_checked;
    }
    result.passed = finite && result.rows_checked > 0 && within_tolerance(result.max_error, result.tolerance);
    return result;
}

}  // namespace anatomy
