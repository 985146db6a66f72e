#pragma once

#include "../tensor.hpp"

namespace anatomy {

// A bias-free projection, y = x @ w.
//   x: [B, T, in], w: [in, out]  ->  y: [B, T, out]
template <typename Real>
Tensor3<Real> linear(const Tensor3<Real>& x, const Matrix<Real>& w);

// Backward of y = x @ w:
//   dx = dy @ w^T                    [B, T, out] x [out, in]  ->  [B, T, in]
//   dw += x^T @ dy, over every row   [in, B*T] x [B*T, out]   ->  [in, out]
template <typename Real>
Tensor3<Real> linear_backward(const Tensor3<Real>& x, const Matrix<Real>& w, const Tensor3<Real>& dy, Matrix<Real>& dw);

// The residual connection, x + update, both [B, T, D].
template <typename Real>
Tensor3<Real> residual_add(const Tensor3<Real>& x, const Tensor3<Real>& update);
// Its backward needs no function: both x and update receive dy unchanged, and the
// model's backward (model/backward.cpp) adds it into both branches.

}  // namespace anatomy
