#include "linear.hpp"

#include "matmul.hpp"

#include <vector>

namespace anatomy {

// [anatomy:linear]
template <typename Real>
Tensor3<Real> linear(const Tensor3<Real>& x, const Matrix<Real>& w) {
    const std::size_t rows = x.shape(0) * x.shape(1), in = x.shape(2), out = w.shape(1);
    if (w.shape(0) != in) throw InputError("linear: input width does not match the weight's rows");
    Tensor3<Real> y = xt::zeros<Real>({x.shape(0), x.shape(1), out});
    // y[r, j] = sum over i, in order, of x[r, i] w[i, j]: the same for every row whatever the batch.
    matmul_accumulate(x.data(), false, w.data(), y.data(), rows, in, out);  // [B*T, in] @ [in, out]
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
    // dx = dy @ w^T, with w transposed once: [B*T, out] @ [out, in]
    std::vector<Real> w_t(out * in);
    for (std::size_t i = 0; i < in; ++i)
        for (std::size_t j = 0; j < out; ++j) w_t[j * in + i] = w(i, j);
    Tensor3<Real> dx = xt::zeros<Real>({x.shape(0), x.shape(1), in});
    matmul_accumulate(dy.data(), false, w_t.data(), dx.data(), rows, out, in);
    // dw += x^T @ dy: [in, B*T] @ [B*T, out], x read as the transpose it is stored as;
    // each dw[i, j] adds x[r, i] dy[r, j] in order of r
    matmul_accumulate(x.data(), true, dy.data(), dw.data(), in, rows, out);
    return dx;
}

template Tensor3<float> linear_backward(const Tensor3<float>&, const Matrix<float>&, const Tensor3<float>&, Matrix<float>&);
template Tensor3<double> linear_backward(const Tensor3<double>&, const Matrix<double>&, const Tensor3<double>&, Matrix<double>&);

template Tensor3<float> linear(const Tensor3<float>&, const Matrix<float>&);
template Tensor3<double> linear(const Tensor3<double>&, const Matrix<double>&);
template Tensor3<float> residual_add(const Tensor3<float>&, const Tensor3<float>&);
template Tensor3<double> residual_add(const Tensor3<double>&, const Tensor3<double>&);

}  // namespace anatomy
