#pragma once

#include "../tensor.hpp"

namespace anatomy {

// Tied vocabulary projection: logits = x @ embedding^T, reusing the input table.
//   x: [B, T, D], embedding: [V, D]  ->  [B, T, V]
template <typename Real>
Tensor3<Real> tied_logits(const Tensor3<Real>& x, const Matrix<Real>& embedding);

}  // namespace anatomy
