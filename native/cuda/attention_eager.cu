// Eager attention: the T x S probabilities are materialised (the inspection path).
//   scores = (Q K^T) / sqrt(D)   cuBLAS batched GEMM, fp32 out      [B, Hq, T, S]
//   probs  = softmax_s(mask(scores))   one block per row             [B, Hq, T, S]
//   out    = probs @ V           cuBLAS batched GEMM                 [B, Hq, T, D]
// GQA without a copy: the `group` query heads that read one KV head are adjacent
// in q ([B, Hq, T, D] with h = kv_head * group + i), so their rows form one
// [group * T, D] matrix; one GEMM per (b, kv_head) covers them all, and its
// [group * T, S] result is exactly those heads' slice of [B, Hq, T, S].
//
// Measured speed: not yet measured on a GPU.
#include <cstdio>

#include "cuda/attention_kernels.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernel_common.cuh"

namespace anatomy::gpu {

const char* attention_shape_problem(const AttentionShape& s) {
    if (s.B < 1 || s.Hq < 1 || s.Hkv < 1 || s.T < 1 || s.S < 1 || s.D < 1) return "every dimension must be at least 1";
    if (s.Hq % s.Hkv != 0) return "query heads must be a multiple of KV heads";
    if (s.S < s.T) return "there must be at least as many keys as queries (S >= T)";
    if (s.kv_capacity < s.S) return "the KV buffers hold fewer rows than S";
    return "";
}

namespace {

constexpr int kSoftmaxThreads = 256;

// One block per score row r in [0, B*Hq*T): the row's query index is t = r % T,
// at absolute position history + t. Two passes over the row: (1) each thread
// keeps a running (max, sum) over its strided cells, merged across the block;
// (2) each cell is written as exp(x - max) / sum, masked cells as exactly 0.
// In place is allowed (probs == scores for fp32): pass 2 reads a cell before the
// same thread overwrites it, and pass 1 has finished everywhere (barrier) first.
template <typename E>
__global__ void __launch_bounds__(kSoftmaxThreads)
    masked_softmax_rows(const float* scores, E* probs, int T, int S, GpuMask mask) {
    const long long row = blockIdx.x;
    const long long q_abs = mask.history + row % T;
    const float* in = scores + row * S;  // scores[row, :], [S]
    E* out = probs + row * S;            // probs[row, :],  [S]

    SoftmaxState mine;
    for (int s = threadIdx.x; s < S; s += blockDim.x) {
        if (!mask_visible(mask, q_abs, s)) continue;
        mine = merge_states(mine, SoftmaxState{in[s], 1.0f});
    }
    // Block reduction: lanes of a warp, then the warps' results in shared memory.
    for (int offset = 16; offset > 0; offset /= 2) {
        const SoftmaxState other{__shfl_xor_sync(0xffffffffu, mine.m, offset),
                                 __shfl_xor_sync(0xffffffffu, mine.l, offset)};
        mine = merge_states(mine, other);
    }
    __shared__ SoftmaxState per_warp[kSoftmaxThreads / 32];
    __shared__ SoftmaxState row_state;
    if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        SoftmaxState total;
        for (int w = 0; w < int(blockDim.x / 32); ++w) total = merge_states(total, per_warp[w]);
        row_state = total;
    }
    __syncthreads();
    const SoftmaxState total = row_state;
    // A row with no visible key becomes all zeros (as in the core), not NaN.
    const float inv_sum = total.l > 0.0f ? 1.0f / total.l : 0.0f;
    for (int s = threadIdx.x; s < S; s += blockDim.x) {
        const float p = mask_visible(mask, q_abs, s) ? expf(in[s] - total.m) * inv_sum : 0.0f;
        out[s] = from_float<E>(p);
    }
}

template <typename E> constexpr cudaDataType_t cuda_type();
template <> constexpr cudaDataType_t cuda_type<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t cuda_type<bf16>() { return CUDA_R_16BF; }

}  // namespace

template <typename E>
void attention_eager(cublasHandle_t cublas, const AttentionShape& sh, const GpuMask& mask, const E* q, const E* k,
                     const E* v, float* scores, E* probs, E* out, cudaStream_t stream) {
    const int group = sh.Hq / sh.Hkv;
    const int rows = group * sh.T;                 // query rows per (b, kv_head): [group * T, D]
    const int batches = sh.B * sh.Hkv;             // one GEMM per (b, kv_head)
    const long long q_stride = 1LL * rows * sh.D;  // q and out, per batch entry
    const long long kv_stride = 1LL * sh.kv_capacity * sh.D;
    const long long score_stride = 1LL * rows * sh.S;
    const float scale = 1.0f / sqrtf(float(sh.D)), one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSetStream(cublas, stream));

    // cuBLAS is column-major; a row-major [R, C] matrix is its transpose there.
    // scores[rows, S] = Q[rows, D] K[S, D]^T   <=>   scores^T[S, rows] = K[S, D] (op T on K^T) x Q^T[D, rows]
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, sh.S, rows, sh.D, &scale,
                                            k, cuda_type<E>(), sh.D, kv_stride,    // K^T as stored: [D, S] col-major
                                            q, cuda_type<E>(), sh.D, q_stride,     // Q^T as stored: [D, rows]
                                            &zero, scores, CUDA_R_32F, sh.S, score_stride, batches,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));

    const long long total_rows = 1LL * sh.B * sh.Hq * sh.T;
    masked_softmax_rows<E><<<unsigned(total_rows), kSoftmaxThreads, 0, stream>>>(scores, probs, sh.T, sh.S, mask);
    CUDA_CHECK_LAUNCH();

    // out[rows, D] = P[rows, S] V[S, D]   <=>   out^T[D, rows] = V^T[D, S] x P^T[S, rows]
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, sh.D, rows, sh.S, &one,
                                            v, cuda_type<E>(), sh.D, kv_stride,      // V^T as stored: [D, S]
                                            probs, cuda_type<E>(), sh.S, score_stride,  // P^T as stored: [S, rows]
                                            &zero, out, cuda_type<E>(), sh.D, q_stride, batches,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template void attention_eager<float>(cublasHandle_t, const AttentionShape&, const GpuMask&, const float*, const float*,
                                     const float*, float*, float*, float*, cudaStream_t);
template void attention_eager<bf16>(cublasHandle_t, const AttentionShape&, const GpuMask&, const bf16*, const bf16*,
                                    const bf16*, float*, bf16*, bf16*, cudaStream_t);

}  // namespace anatomy::gpu
