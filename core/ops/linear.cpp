#include "linear.hpp"

namespace anatomy {

// [anatomy:linear]
template <typename Real>
Tensor3<Real> linear(const Tensor3<Real>& x, const Matrix<Real>& w) {
    const std::size_t rows = x.shape(0) * x.shape(1), in = x.shape(2), out = w.shape(1);
    if (w.shape(0) != in) throw InputError("linear: input width does not match the weight's rows");
    Tensor3<Real> y = xt::zeros<Real>({x.shape(0), x.shape(1), out});
    // Row by row, accumulating x[r, i] * w[i, :] so the inner loop runs over
    // contiguous memory. Each row is summed in the same order whatever the batch.
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* x_row = x.data() + r * in;
        Real* y_row = y.data() + r * out;
        for (std::size_t i = 0; i < in; ++i) {
            const Real a = x_row[i];
            const Real* w_row = w.data() + i * out;
            for (std::size_t j = 0; j < out; ++j) y_row[j] += a * w_row[j];
        }
    }
    return y;
}
// [/anatomy:linear]

// [anatomy:residual_add]
template <typename Real>
Tensor3<Real> residual_add(const Tensor3<Real>& x, const Tensor3<Real>& update) {
    return x + update;
}
// [/anatomy:residual_add]

template <typename Real>
Tensor3<Real> linear_backward(const Tensor3<Real>& x, const Matrix<Real>& w, const Tensor3<Real>& dy, Matrix<Real>& dw) {
    const std::size_t rows = x.shape(0) * x.shape(1), in = w.shape(0), out = w.shape(1);
    Tensor3<Real> dx = xt::zeros<Real>({x.shape(0), x.shape(1), in});
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* x_row = x.data() + r * in;
        const Real* g = dy.data() + r * out;
        Real* dx_row = dx.data() + r * in;
        for (std::size_t i = 0; i < in; ++i) {
            const Real* w_row = &w(i, 0);
            Real* dw_row = &dw(i, 0);
            Real sum = 0;
            for (std::size_t j = 0; j < out; ++j) {
                sum += g[j] * w_row[j];       // dx[r, i] = sum_j dy[r, j] w[i, j]
                dw_row[j] += x_row[i] * g[j];  // dw[i, j] += x[r, i] dy[r, j]
            }
            dx_row[i] = sum;
        }
    }
    return dx;
}

template Tensor3<float> linear_backward(const Tensor3<float>&, const Matrix<float>&, const Tensor3<float>&, Matrix<float>&);
template Tensor3<double> linear_backward(const Tensor3<double>&, const Matrix<double>&, const Tensor3<double>&, Matrix<double>&);

template Tensor3<float> linear(const Tensor3<float>&, const Matrix<float>&);
template Tensor3<double> linear(const Tensor3<double>&, const Matrix<double>&);
template Tensor3<float> residual_add(const Tensor3<float>&, const Tensor3<float>&);
template Tensor3<double> residual_add(const Tensor3<double>&, const Tensor3<double>&);

}  // namespace anatomy
