// The GPU attention kernels, versions side by side (llm.c's dev/cuda layout).
// Raw pointers and explicit shapes only; the host code in gpu_*.cpp converts
// from and to the core's xtensor arrays, and checks every version against the
// core before anything is timed (gpu_kernel_checks.cpp, `attn bench attention`).
//
// Every version computes, for T new queries over S = history + T keys,
//   out[b, h, t] = sum_s softmax_s(mask(q[b,h,t] . k[b,h/group,s] / sqrt(D))) v[b,h/group,s]
// with group = Hq / Hkv: GQA is an index into K and V, never a copy.
//
//   eager        cuBLAS batched GEMM for the scores [B, Hq, T, S] (fp32), a mask +
//                row-softmax kernel writing the probabilities [B, Hq, T, S], a
//                second batched GEMM for P @ V. Materialises T x S twice: the
//                inspection path (the probe reads the probabilities).
//   flash_plain  FlashAttention's loop written to teach: one thread per query
//                row, K/V tiles of Bc keys staged in shared memory, running max m,
//                sum l and output O in registers. fp32 or bf16 storage, fp32
//                arithmetic, any D <= 128 (instantiated for 8, 64, 128).
//   flash_mma    the same loop on tensor cores (mma.sync m16n8k16, bf16 in, fp32
//                accumulate, FlashAttention-2's register layout): 4 warps own 16
//                query rows each; S = Q K^T and O += P V stay in registers, P is
//                re-packed from the S accumulators without a trip through memory.
//                bf16 only, D in {64, 128}.
//   flash_mma2   flash_mma with FlashAttention-2's memory path: Br = 128 (4 warps of
//                32 query rows, so each K/V fragment feeds two mma), Bc = 64; Q, K, V
//                copied by cp.async into XOR-swizzled shared memory, K and V in two
//                stages (the next unskipped tile loads while this one computes),
//                operands read with ldmatrix (.trans for V). bf16 only, D in {64, 128};
//                16-byte aligned q, k, v, out; 48 KB (D = 64) or 96 KB (D = 128) of
//                dynamic shared memory per block.
//   decode_split one new query per sequence (T = 1) over a long cache: the keys
//                are split into chunks, each block reduces one chunk to (m, l, O),
//                and a combine kernel merges the chunks (flash-decoding). A block
//                per query head: each KV head is read once per query head.
//   decode_group the same over blocks of (b, KV head, split) that serve every query
//                head of the group, so each KV head is read once; 16-byte loads,
//                D and the group size compiled in, the merge done by the last
//                block of each row (decode_plan.hpp).
//
// Whole tiles that the mask hides are skipped (never loaded); only tiles the
// mask cuts through evaluate the per-cell predicate.
//
// Measured speed: not yet measured on a GPU. These kernels have been compiled
// (sm_90) but not yet run; `scripts/gpu-check.sh` validates and times them.
#pragma once

#include <cstddef>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda/attention_mask.hpp"
#include "cuda/decode_plan.hpp"

namespace anatomy::gpu {

using bf16 = __nv_bfloat16;

// q: [B, Hq, T, D] contiguous. k, v: [B, Hkv, kv_capacity, D], of which rows
// 0 .. S - 1 of each head are filled (a KV cache allocated for kv_capacity tokens);
// element (b, h, s, d) lies at ((b * Hkv + h) * kv_capacity + s) * D + d.
// out: [B, Hq, T, D] contiguous.
struct AttentionShape {
    int B = 1, Hq = 1, Hkv = 1, T = 1, S = 1, D = 1;
    int kv_capacity = 1;  // >= S
};

// Empty when the kernels accept the shape; otherwise what is wrong.
const char* attention_shape_problem(const AttentionShape& shape);

// ---- eager -------------------------------------------------------------------
// scores: [B, Hq, T, S] fp32 workspace; probs: [B, Hq, T, S], kept for the caller
// (for E = float, probs may be the scores buffer itself: the softmax runs in place).
template <typename E>
void attention_eager(cublasHandle_t cublas, const AttentionShape& shape, const GpuMask& mask, const E* q, const E* k,
                     const E* v, float* scores, E* probs, E* out, cudaStream_t stream);

// ---- flash -------------------------------------------------------------------
template <typename E>
void attention_flash_plain(const AttentionShape& shape, const GpuMask& mask, const E* q, const E* k, const E* v, E* out,
                           cudaStream_t stream);
bool flash_plain_supports(int D);  // D in {8, 64, 128}

void attention_flash_mma(const AttentionShape& shape, const GpuMask& mask, const bf16* q, const bf16* k, const bf16* v,
                         bf16* out, cudaStream_t stream);
bool flash_mma_supports(int D);  // D in {64, 128}

void attention_flash_mma2(const AttentionShape& shape, const GpuMask& mask, const bf16* q, const bf16* k,
                          const bf16* v, bf16* out, cudaStream_t stream);
bool flash_mma2_supports(int D);  // D in {64, 128}

// ---- decode ------------------------------------------------------------------
// T must be 1. Key chunks per (b, h): `splits` (see decode_split_count).
// Workspace: partial_out [B, Hq, splits, D] and partial_ml [B, Hq, splits, 2] fp32.
int decode_split_count(const AttentionShape& shape, int multiprocessors);
std::size_t decode_partial_out_floats(const AttentionShape& shape, int splits);
std::size_t decode_partial_ml_floats(const AttentionShape& shape, int splits);
template <typename E>
void attention_decode_split(const AttentionShape& shape, const GpuMask& mask, const E* q, const E* k, const E* v,
                            E* out, int splits, float* partial_out, float* partial_ml, cudaStream_t stream);
bool decode_split_supports(int D);  // 1 <= D <= 256

// Version 2. T must be 1; group = Hq / Hkv. Chunks: decode_group_plan (128 or 256 keys each).
// Workspace: partial_out [B, Hkv, splits, group, D] and partial_ml [B, Hkv, splits, group, 2]
// fp32, and arrivals [B * Hkv] counters that must be zero before the first call (each
// call leaves them zero again).
bool decode_group_supports(int D, int group);  // D in {8, 64, 128}, group in {1, 2, 4, 8}
DecodePlan decode_group_plan(const AttentionShape& shape, int multiprocessors);
std::size_t decode_group_partial_out_floats(const AttentionShape& shape, const DecodePlan& plan);
std::size_t decode_group_partial_ml_floats(const AttentionShape& shape, const DecodePlan& plan);
std::size_t decode_group_arrival_counters(const AttentionShape& shape);
template <typename E>
void attention_decode_group(const AttentionShape& shape, const GpuMask& mask, const E* q, const E* k, const E* v,
                            E* out, const DecodePlan& plan, float* partial_out, float* partial_ml, unsigned* arrivals,
                            cudaStream_t stream);

}  // namespace anatomy::gpu
