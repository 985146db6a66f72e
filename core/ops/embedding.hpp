#pragma once

#include "../tensor.hpp"

namespace anatomy {

// Row lookup: x[b, t, :] = table[ids[b, t], :].
//   table: [V, D], ids: [B, T]  ->  x: [B, T, D]
// Throws InputError for an id outside [0, V).
template <typename Real>
Tensor3<Real> embed(const Matrix<Real>& table, const TokenIds& ids);

}  // namespace anatomy
