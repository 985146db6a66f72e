#pragma once

#include "../tensor.hpp"

namespace anatomy {

// RMSNorm over the last axis, with a learned scale and no mean subtraction:
//   y[b, t, :] = x[b, t, :] / sqrt(mean(x[b, t, :]^2) + eps) * scale
//   x: [B, T, D], scale: [D]  ->  y: [B, T, D]
template <typename Real>
Tensor3<Real> rms_norm(const Tensor3<Real>& x, const Vector<Real>& scale, double eps);

}  // namespace anatomy
