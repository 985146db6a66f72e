#pragma once

#include <utility>

#include "../tensor.hpp"

namespace anatomy {

// SiLU (swish): a * sigmoid(a) = a / (1 + exp(-a)), elementwise.
template <typename Real>
Tensor3<Real> silu(const Tensor3<Real>& a);

// SwiGLU's gating, elementwise: silu(gate) * up, where gate = x @ w_gate and up = x @ w_up.
//   gate, up: [B, T, F]  ->  [B, T, F]
template <typename Real>
Tensor3<Real> swiglu_hidden(const Tensor3<Real>& gate, const Tensor3<Real>& up);

// Backward of silu(gate) * up, elementwise, with silu'(a) = sigmoid(a) (1 + a (1 - sigmoid(a))):
//   dgate = dh * up * silu'(gate),  dup = dh * silu(gate)
//   gate, up, dh: [B, T, F]  ->  {dgate, dup}: [B, T, F] each
template <typename Real>
std::pair<Tensor3<Real>, Tensor3<Real>> swiglu_hidden_backward(const Tensor3<Real>& gate, const Tensor3<Real>& up,
                                                               const Tensor3<Real>& dh);

// The gated feed-forward sublayer, position by position:
//   (silu(x @ w_gate) * (x @ w_up)) @ w_down
//   x: [B, T, D], w_gate, w_up: [D, F], w_down: [F, D]  ->  [B, T, D]
template <typename Real>
Tensor3<Real> swiglu(const Tensor3<Real>& x, const Matrix<Real>& w_gate, const Matrix<Real>& w_up,
                     const Matrix<Real>& w_down);

}  // namespace anatomy
