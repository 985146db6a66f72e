// The decoder's other operations on the GPU, one kernel each, fp32, raw pointers
// and explicit shapes. Each mirrors one function of core/ops (named beside it)
// and is checked against it through the whole forward (gpu_verify.cpp).
// Activations stay in the projection layout [B, T, H * dh] (= [B, T, H, dh]);
// attention reads heads [B, H, T, dh], so split/merge kernels move them.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace anatomy::gpu {

// core/ops/embedding: x[r, :] = table[ids[r], :].   table: [V, D], ids: [rows]  ->  x: [rows, D]
// Ids must already be checked against V on the host (the core raises the error there).
void embedding_gather(const float* table, const std::int32_t* ids, float* x, int rows, int D, cudaStream_t stream);

// core/ops/rms_norm: y = x / sqrt(mean(x^2) + eps) * scale.   x, y: [rows, D], scale: [D]
void rms_norm(const float* x, const float* scale, float* y, int rows, int D, float eps, cudaStream_t stream);

// core/ops/rope, in place on x: [B, T, H, dh]; token t sits at absolute position
// position0 + t (position0 = tokens already cached). Angles as in the core:
// pos * theta^(-2i/dh) in double, cos and sin in double, rounded to float.
//   half_split pairs (i, i + dh/2); otherwise interleaved pairs (2i, 2i + 1).
void rope_inplace(float* x, int B, int T, int H, int dh, long long position0, double theta, bool half_split,
                  cudaStream_t stream);

// core/ops/heads split_heads: [B, T, H, dh] -> [B, H, T, dh]
void split_heads(const float* x, float* heads, int B, int T, int H, int dh, cudaStream_t stream);
// core/ops/heads merge_heads: [B, H, T, dh] -> [B, T, H, dh]
void merge_heads(const float* heads, float* x, int B, int T, int H, int dh, cudaStream_t stream);

// core/kv_cache append_rows, in place: rows position0 .. position0 + T - 1 of each head.
//   fresh: [B, T, Hkv, dh]  ->  cache: [B, Hkv, capacity, dh]
void append_to_cache(const float* fresh, float* cache, int B, int T, int Hkv, int dh, int capacity,
                     long long position0, cudaStream_t stream);

// core/ops/swiglu's gating: hidden = silu(gate) * up, elementwise over n values.
void silu_multiply(const float* gate, const float* up, float* hidden, long long n, cudaStream_t stream);

// core/ops/linear residual_add, in place: x += update, over n values.
void residual_add(float* x, const float* update, long long n, cudaStream_t stream);

// Precision conversion for the bf16 kernels (round to nearest even) and back.
void float_to_bf16(const float* in, __nv_bfloat16* out, long long n, cudaStream_t stream);
void bf16_to_float(const __nv_bfloat16* in, float* out, long long n, cudaStream_t stream);

}  // namespace anatomy::gpu
