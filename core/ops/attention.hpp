// Scaled dot-product attention, one step per function:
//   scores = q k^T / sqrt(dh)   ->  mask  ->  softmax over keys  ->  probs @ v
// Grouped-query attention is an index, never a copy: query head h reads KV head
// h / group, where group = Hq / Hkv (llama2.c's kv_mul).
//
// These are the reference, written as the formulas read: plain loops, every sum in
// order. The model runs the same four steps vectorised (v4 in attention_kernels.hpp,
// ops/attention_fast_steps.cpp), which give these bits exactly for finite inputs
// (tests/unit/test_attention_steps.cpp holds them to each other).
#pragma once

#include <cstdint>

#include "../masks.hpp"
#include "../tensor.hpp"

namespace anatomy {

// Query heads per KV head, Hq / Hkv; throws InputError when the head counts do not divide.
std::size_t kv_group(std::size_t n_query_heads, std::size_t n_kv_heads);

// The causal mask for T new queries over S keys (S >= T), cell by cell from
// masks.hpp's causal_allows (the rule lives there, with every other mask).   ->  [T, S]
Mask causal_mask(std::size_t T, std::size_t S);

// Scores of every query against every key, scaled by 1/sqrt(dh).
//   q: [B, Hq, T, dh], k: [B, Hkv, S, dh]  ->  [B, Hq, T, S]
template <typename Real>
Tensor4<Real> attention_scores(const Tensor4<Real>& q, const Tensor4<Real>& k);

// Forbidden cells become -infinity, so softmax gives them exactly zero.
//   scores: [B, H, T, S], allowed: [T, S]  ->  [B, H, T, S]
template <typename Real>
Tensor4<Real> apply_mask(const Tensor4<Real>& scores, const Mask& allowed);

// Numerically stable softmax over the last axis (the key positions): subtract
// the row maximum, exponentiate, divide by the sum. A row with no allowed key
// (all -infinity) becomes all zeros rather than NaN.
//   x: [B, H, T, S]  ->  [B, H, T, S], each row summing to 1
template <typename Real>
Tensor4<Real> softmax_rows(const Tensor4<Real>& x);

// The same softmax with one more column per row that has no value: query head h's
// learned sink logit sinks[h] (gpt-oss's attention sinks). Over the row's scores z,
//   p_s = e^(z_s - m) / (e^(sink - m) + sum_s' e^(z_s' - m)),  m = max(sink, max_s z_s),
// so a row gives 1 - sum_s p_s to "nothing" and sums to one minus the sink's share. The
// sink is added to the sum after the keys. A row with every key masked gives every key 0.
//   x: [B, H, T, S], sinks: [H]  ->  [B, H, T, S]
template <typename Real>
Tensor4<Real> softmax_rows_with_sinks(const Tensor4<Real>& x, const Vector<Real>& sinks);

// Mix the value vectors with the attention weights.
//   probs: [B, Hq, T, S], v: [B, Hkv, S, dh]  ->  [B, Hq, T, dh]
template <typename Real>
Tensor4<Real> weighted_values(const Tensor4<Real>& probs, const Tensor4<Real>& v);

// ---- Backward, one function per step above, in reverse order.

// probs @ v: dprobs[t, s] = sum_d dout[t, d] v[g, s, d], and each KV head's dv sums
// over its group's query heads (the shared head receives every reader's gradient).
//   probs: [B, Hq, T, S], v: [B, Hkv, S, dh], dout: [B, Hq, T, dh]  ->  dprobs: [B, Hq, T, S];
//   dv: [B, Hkv, S, dh] accumulated
template <typename Real>
Tensor4<Real> weighted_values_backward(const Tensor4<Real>& probs, const Tensor4<Real>& v, const Tensor4<Real>& dout,
                                       Tensor4<Real>& dv);

// Softmax over each row: dx[s] = p[s] * (dp[s] - sum_s' dp[s'] p[s']).
// A masked key has p = 0 and so gets dx = 0.
//   probs, dprobs: [B, H, T, S]  ->  dx: [B, H, T, S]
template <typename Real>
Tensor4<Real> softmax_rows_backward(const Tensor4<Real>& probs, const Tensor4<Real>& dprobs);

// Softmax with a sink column: the keys' gradient is softmax_rows_backward's (the sink's
// column has no value, so dp = 0 there), and the sink's,
//   dsinks[h] += sum over the rows of head h of  -p_sink * sum_s dp[s] p[s],
// with p_sink = 1 - sum_s p[s], the row's share given to the sink.
//   probs, dprobs: [B, H, T, S]  ->  dx: [B, H, T, S]; dsinks: [H] accumulated
template <typename Real>
Tensor4<Real> softmax_rows_with_sinks_backward(const Tensor4<Real>& probs, const Tensor4<Real>& dprobs, Vector<Real>& dsinks);

// The mask passes the gradient of an allowed score and stops it at a forbidden one
// (that score was replaced by -infinity, so it had no effect).
//   dmasked: [B, H, T, S], allowed: [T, S]  ->  dscores: [B, H, T, S]
template <typename Real>
Tensor4<Real> apply_mask_backward(const Tensor4<Real>& dmasked, const Mask& allowed);

// Scores q k^T / sqrt(dh): dq[h, t] = sum_s dscores[h, t, s] k[g, s] / sqrt(dh), and
// dk[g, s] sums dscores[h, t, s] q[h, t] / sqrt(dh) over t and over the query heads
// h of KV head g's group (by index, never a copy).
//   q: [B, Hq, T, dh], k: [B, Hkv, S, dh], dscores: [B, Hq, T, S]  ->  dq: [B, Hq, T, dh];
//   dk: [B, Hkv, S, dh] accumulated
template <typename Real>
Tensor4<Real> attention_scores_backward(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& dscores,
                                        Tensor4<Real>& dk);

}  // namespace anatomy
