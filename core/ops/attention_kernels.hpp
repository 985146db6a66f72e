// Causal attention as one call, in several versions side by side (llm.c's
// dev/cuda layout). Version 0 is the core's reference, composed from the
// operations in attention.hpp; every other version is checked against it
// (tests/unit/test_attention_kernels.cpp, and `attn bench cpu` before timing).
//
// All versions compute, for T new queries over S = history + T keys,
//   out[b, h, t] = sum_{s <= t + history} softmax_s(q[b,h,t] . k[b,h/group,s] / sqrt(dh)) v[b,h/group,s]
//   q: [B, Hq, T, dh], k: [B, Hkv, S, dh], v: [B, Hkv, S, dh]  ->  [B, Hq, T, dh]
// with group = Hq / Hkv (GQA as an index), fp32 unless said otherwise.
//
//   v0 attention_reference  scores -> mask -> softmax -> probs @ v with the core's
//                           ops; materialises [B, Hq, T, S] three times (scores,
//                           masked, probs). Grouped (index) or repeated-K/V (copy).
//   v1 attention_rows       one query row at a time: contiguous dot products over
//                           the visible keys only, softmax, then axpy over V rows.
//                           Scratch: one row of S scores.
//   v2 attention_grouped    the query rows that read one KV head (TinyLlama: the 8
//                           heads of a group at one position) as a register tile
//                           against K copied into transposed panels: no horizontal
//                           sums, each K value loaded once per tile. One softmax
//                           per row over its visible keys; P @ V in register tiles.
//                           A KV head read by a single tile (a decode step) is not
//                           copied: its K rows are read in place, with the tile's
//                           rows as the vector lanes.
//                           Scratch: a tile's rows of S scores plus the K copy [S, dh].
//   v3 attention_streaming  FlashAttention's tiling on a CPU: a tile of Br query
//                           rows walks key blocks of Bc keys keeping a running max
//                           m, sum l and unnormalised output O, never holding more
//                           than Br x Bc scores (K read in place for a decode step,
//                           as in v2). Scratch: the K copy plus O(Br x (Bc + dh)).
//   v4 attention_steps      v0's four steps as four calls, each vectorised
//                           (ops/attention_fast_steps.cpp): the same bits as v0,
//                           and it keeps scores and probabilities [B, Hq, T, S].
//                           What the model runs: its trace, the page's widgets and
//                           training's backward read those probabilities.
//
// v1-v3 skip masked keys instead of computing then masking them: a row (v1) or a
// tile of rows (v2, v3) stops at the last key it may see, so only the diagonal's
// partial key panel is computed and given weight 0; nothing is exponentiated for a
// masked key. Tile sizes and measured speeds are at the top of attention_kernels.cpp.
#pragma once

#include "../masks.hpp"
#include "../tensor.hpp"

namespace anatomy {

// v0: the core's reference attention with a causal mask (history = S - T).
//   repeated_kv = false: query head h reads KV head h / group (what forward() runs)
//   repeated_kv = true:  K and V are first copied to one head per query head
template <typename Real>
Tensor4<Real> attention_reference(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& v,
                                  bool repeated_kv = false);

// v1, v2, v3: the fast fp32 kernels. Same contract as v0.
Tensor4<float> attention_rows(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v);
Tensor4<float> attention_grouped(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v);
Tensor4<float> attention_streaming(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v);

// v4: the steps of attention.hpp, vectorised, with the same contracts and, for finite
// inputs, the same bits (float and double). The model calls these four.
template <typename Real>
Tensor4<Real> attention_scores_fast(const Tensor4<Real>& q, const Tensor4<Real>& k);
template <typename Real>
Tensor4<Real> apply_mask_fast(const Tensor4<Real>& scores, const Mask& allowed);
template <typename Real>
Tensor4<Real> softmax_rows_fast(const Tensor4<Real>& x);
template <typename Real>
Tensor4<Real> softmax_rows_with_sinks_fast(const Tensor4<Real>& x, const Vector<Real>& sinks);  // softmax_rows_with_sinks' bits
template <typename Real>
Tensor4<Real> weighted_values_fast(const Tensor4<Real>& probs, const Tensor4<Real>& v);
// ... and composed with the causal mask, for the benchmark: the same contract as v0.
Tensor4<float> attention_steps(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v);

// Throws InputError unless q, k, v have the shapes above with S >= T and Hq a
// multiple of Hkv. Every kernel calls it before any work.
void check_attention_shapes(const std::array<std::size_t, 4>& q, const std::array<std::size_t, 4>& k,
                            const std::array<std::size_t, 4>& v);

// The arithmetic ceiling of the kernels' build, for the benchmark: `rounds`
// rounds of a multiply and an add on every lane of a dozen register-resident
// vectors (fused where the build has FMA), no memory traffic. The result
// depends on every lane, so the work cannot be optimised away; each round is
// multiply_add_flops_per_round() floating-point operations.
float multiply_add_rounds(std::size_t rounds, float x);
double multiply_add_flops_per_round();

// The vector width and tile sizes this build compiled the kernels with, for the
// bench's header line ("avx512", "avx2", "sse2", "wasm-simd128", ...).
const char* kernel_isa();

}  // namespace anatomy
