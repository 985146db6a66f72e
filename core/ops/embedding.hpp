#pragma once

#include "../tensor.hpp"

namespace anatomy {

// Row lookup: x[b, t, :] = table[ids[b, t], :].
//   table: [V, D], ids: [B, T]  ->  x: [B, T, D]
// Throws InputError for an id outside [0, V).
template <typename Real>
Tensor3<Real> embed(const Matrix<Real>& table, const TokenIds& ids);

// Backward: each row's gradient goes back to the table row it was read from,
// added (an id used twice, or the tied head's share, accumulates).
//   dx: [B, T, D], ids: [B, T]  ->  dtable: [V, D] += dx[b, t, :] at row ids[b, t]
template <typename Real>
void embed_backward(const Tensor3<Real>& dx, const TokenIds& ids, Matrix<Real>& dtable);

}  // namespace anatomy
