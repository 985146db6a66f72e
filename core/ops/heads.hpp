#pragma once

#include "../tensor.hpp"

namespace anatomy {

// Separate heads: reshape [B, T, H*dh] to [B, T, H, dh], then move the head axis
// before the position axis. Reshaping straight to [B, H, T, dh] would mix positions
// into heads; the transpose is what keeps each head's channels together.
//   x: [B, T, H*dh]  ->  [B, H, T, dh]
template <typename Real>
Tensor4<Real> split_heads(const Tensor3<Real>& x, int n_heads);

// The inverse: concatenate the heads' channels at each position.
//   x: [B, H, T, dh]  ->  [B, T, H*dh]   (head h fills channels h*dh .. h*dh + dh - 1)
template <typename Real>
Tensor3<Real> merge_heads(const Tensor4<Real>& x);
// Backward: the two are each other's inverse and only move numbers, so the
// gradient of split_heads is merge_heads of the gradient, and the other way round.

// The explicit reference for grouped-query attention: copy each KV head `group`
// times so that query head h gets its own copy of KV head h / group.
//   kv: [B, Hkv, S, dh]  ->  [B, Hkv*group, S, dh]
template <typename Real>
Tensor4<Real> repeat_kv(const Tensor4<Real>& kv, int group);

}  // namespace anatomy
