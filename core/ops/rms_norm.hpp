#pragma once

#include "../tensor.hpp"

namespace anatomy {

// RMSNorm over the last axis, with a learned scale and no mean subtraction:
//   y[b, t, :] = x[b, t, :] / sqrt(mean(x[b, t, :]^2) + eps) * scale
//   x: [B, T, D], scale: [D]  ->  y: [B, T, D]
template <typename Real>
Tensor3<Real> rms_norm(const Tensor3<Real>& x, const Vector<Real>& scale, double eps);

// Backward. With r = 1 / sqrt(mean(x^2) + eps), n = x r and y = n * scale:
//   dscale += sum over rows of dy * n
//   dx = r * (g - x * r^2 * mean(g * x)),  where g = dy * scale
// (r depends on every channel of its row, hence the second term).
//   x, dy: [B, T, D], scale: [D]  ->  dx: [B, T, D]; dscale: [D] accumulated
template <typename Real>
Tensor3<Real> rms_norm_backward(const Tensor3<Real>& x, const Vector<Real>& scale, double eps, const Tensor3<Real>& dy,
                                Vector<Real>& dscale);

}  // namespace anatomy
