#include "rms_norm.hpp"

#include <cmath>

namespace anatomy {

// [anatomy:rms_norm]
template <typename Real>
Tensor3<Real> rms_norm(const Tensor3<Real>& x, const Vector<Real>& scale, double eps) {
    const std::size_t rows = x.shape(0) * x.shape(1), D = x.shape(2);
    Tensor3<Real> y(x.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* in = x.data() + r * D;
        Real* out = y.data() + r * D;
        Real sum_sq = 0;
        for (std::size_t d = 0; d < D; ++d) sum_sq += in[d] * in[d];
        const Real inv_rms = Real(1) / std::sqrt(sum_sq / Real(D) + Real(eps));
        for (std::size_t d = 0; d < D; ++d) out[d] = in[d] * inv_rms * scale[d];
    }
    return y;
}
// [/anatomy:rms_norm]

template <typename Real>
Tensor3<Real> rms_norm_backward(const Tensor3<Real>& x, const Vector<Real>& scale, double eps, const Tensor3<Real>& dy,
                                Vector<Real>& dscale) {
    const std::size_t rows = x.shape(0) * x.shape(1), D = x.shape(2);
    Tensor3<Real> dx(x.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* in = x.data() + r * D;
        const Real* grad = dy.data() + r * D;
        Real* out = dx.data() + r * D;
        Real sum_sq = 0;
        for (std::size_t d = 0; d < D; ++d) sum_sq += in[d] * in[d];
        const Real inv_rms = Real(1) / std::sqrt(sum_sq / Real(D) + Real(eps));
        Real g_dot_x = 0;  // sum_d g[d] * x[d], with g = dy * scale
        for (std::size_t d = 0; d < D; ++d) {
            dscale[d] += grad[d] * in[d] * inv_rms;
            g_dot_x += grad[d] * scale[d] * in[d];
        }
        const Real coupling = inv_rms * inv_rms * g_dot_x / Real(D);
        for (std::size_t d = 0; d < D; ++d) out[d] = inv_rms * (grad[d] * scale[d] - in[d] * coupling);
    }
    return dx;
}

template Tensor3<float> rms_norm_backward(const Tensor3<float>&, const Vector<float>&, double, const Tensor3<float>&, Vector<float>&);
template Tensor3<double> rms_norm_backward(const Tensor3<double>&, const Vector<double>&, double, const Tensor3<double>&, Vector<double>&);
template Tensor3<float> rms_norm(const Tensor3<float>&, const Vector<float>&, double);
template Tensor3<double> rms_norm(const Tensor3<double>&, const Vector<double>&, double);

}  // namespace anatomy
