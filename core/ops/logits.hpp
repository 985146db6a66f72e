#pragma once

#include "../tensor.hpp"

namespace anatomy {

// Tied vocabulary projection: logits = x @ embedding^T, reusing the input table.
//   x: [B, T, D], embedding: [V, D]  ->  [B, T, V]
template <typename Real>
Tensor3<Real> tied_logits(const Tensor3<Real>& x, const Matrix<Real>& embedding);

// Backward: dx = dlogits @ E, and the table's gradient gains dlogits^T @ x (the
// same table the embedding reads: its gradient has both shares, see embed_backward).
//   x: [B, T, D], embedding: [V, D], dlogits: [B, T, V]  ->  dx: [B, T, D]; dembedding: [V, D] accumulated
template <typename Real>
Tensor3<Real> tied_logits_backward(const Tensor3<Real>& x, const Matrix<Real>& embedding, const Tensor3<Real>& dlogits,
                                   Matrix<Real>& dembedding);

// The training loss: the mean over all B*T positions of -log softmax(logits)[target].
//   logits: [B, T, V], targets: [B, T]  ->  nats per token
// Throws InputError for a target outside [0, V).
template <typename Real>
double cross_entropy(const Tensor3<Real>& logits, const TokenIds& targets);

// Its gradient: (softmax(logits) - onehot(target)) / (B*T).   ->  dlogits: [B, T, V]
template <typename Real>
Tensor3<Real> cross_entropy_backward(const Tensor3<Real>& logits, const TokenIds& targets);

}  // namespace anatomy
