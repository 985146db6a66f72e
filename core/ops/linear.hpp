#pragma once

#include "../tensor.hpp"

namespace anatomy {

// A bias-free projection, y = x @ w.
//   x: [B, T, in], w: [in, out]  ->  y: [B, T, out]
template <typename Real>
Tensor3<Real> linear(const Tensor3<Real>& x, const Matrix<Real>& w);

// The residual connection, x + update, both [B, T, D].
template <typename Real>
Tensor3<Real> residual_add(const Tensor3<Real>& x, const Tensor3<Real>& update);

}  // namespace anatomy
