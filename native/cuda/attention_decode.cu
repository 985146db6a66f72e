// Split-K decode (flash-decoding): one new query per sequence (T = 1) over a long
// KV cache. A single (b, h) row has too little work for a GPU, so its S keys are
// cut into `splits` chunks, each reduced by its own block to a partial softmax
// state (m, l, O unnormalised), and a second kernel merges the chunks:
//   M = max_i m_i,  L = sum_i l_i exp(m_i - M),  out = sum_i O_i exp(m_i - M) / L
// Decoding reads every cached key and value once, so its speed is memory bandwidth.
//
// Measured speed: not yet measured on a GPU.
#include <algorithm>

#include "cuda/attention_kernels.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernel_common.cuh"

namespace anatomy::gpu {
namespace {

constexpr int kDecodeWarps = 8;     // warps per block; warp w takes keys w, w + 8, ... of the chunk
constexpr int kKeysPerStep = 4;     // keys a warp loads before reducing them (memory-level parallelism)
constexpr int kMaxPerLane = 8;      // channels per lane: D <= 32 * 8 = 256
constexpr int kMinKeysPerSplit = 64;

// grid: x = splits, y = B * Hq; block = 8 warps. Lane i of each warp holds channels
// d = i, i + 32, ... (fewer than 32 lanes are busy when D < 32). Block (x, y)
// reduces keys [x * chunk, min(S, (x + 1) * chunk)) of head (b, h) = (y / Hq, y % Hq).
// Writes partial_out[y, x, :] = O (unnormalised, [D]) and partial_ml[y, x, :] = (m, l).
template <typename E>
__global__ void __launch_bounds__(32 * kDecodeWarps)
    decode_split_kernel(AttentionShape sh, GpuMask mask, const E* q, const E* k, const E* v, int splits,
                        float* partial_out, float* partial_ml, float scale) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int b = blockIdx.y / sh.Hq, h = blockIdx.y % sh.Hq;
    const int kv_head = h / (sh.Hq / sh.Hkv);
    const int D = sh.D;
    const int chunk = (sh.S + splits - 1) / splits;
    const int s_begin = blockIdx.x * chunk, s_end = min(sh.S, s_begin + chunk);
    const long long q_abs = mask.history;  // T = 1: the query sits at position S - 1 = history

    const long long head_row0 = (1LL * b * sh.Hkv + kv_head) * sh.kv_capacity;
    const E* k_head = k + head_row0 * D;  // [kv_capacity, D]
    const E* v_head = v + head_row0 * D;
    const E* q_row = q + 1LL * blockIdx.y * D;  // q: [B, Hq, 1, D]

    float q_reg[kMaxPerLane], acc[kMaxPerLane];
#pragma unroll
    for (int i = 0; i < kMaxPerLane; ++i) {
        const int d = lane + 32 * i;
        q_reg[i] = d < D ? to_float(q_row[d]) : 0.0f;
        acc[i] = 0.0f;
    }
    float m = -kInf, l = 0.0f;

    // Keys s, s + 8, s + 16, s + 24 (kKeysPerStep of them, stride kDecodeWarps) per step.
    for (int s = s_begin + warp; s < s_end; s += kDecodeWarps * kKeysPerStep) {
        float score[kKeysPerStep];
#pragma unroll
        for (int j = 0; j < kKeysPerStep; ++j) {
            const int key = s + j * kDecodeWarps;
            float partial = 0.0f;
            if (key < s_end) {
#pragma unroll
                for (int i = 0; i < kMaxPerLane; ++i) {
                    const int d = lane + 32 * i;
                    if (d < D) partial += q_reg[i] * to_float(k_head[1LL * key * D + d]);
                }
            }
            score[j] = partial;
        }
#pragma unroll
        for (int j = 0; j < kKeysPerStep; ++j) {
            const int key = s + j * kDecodeWarps;
            const float dot = warp_sum(score[j]);  // every lane gets the whole dot product
            score[j] = key < s_end && mask_visible(mask, q_abs, key) ? dot * scale : -kInf;
        }
#pragma unroll
        for (int j = 0; j < kKeysPerStep; ++j) {
            if (score[j] == -kInf) continue;  // the same for every lane of the warp
            const int key = s + j * kDecodeWarps;
            const float m_new = fmaxf(m, score[j]);
            const float correction = expf(m - m_new), p = expf(score[j] - m_new);
            l = l * correction + p;
#pragma unroll
            for (int i = 0; i < kMaxPerLane; ++i) {
                const int d = lane + 32 * i;
                const float value = d < D ? to_float(v_head[1LL * key * D + d]) : 0.0f;
                acc[i] = acc[i] * correction + p * value;
            }
            m = m_new;
        }
    }

    // Merge the 8 warps' states in shared memory: [warps][D] outputs plus (m, l) per warp.
    __shared__ float warp_out[kDecodeWarps][32 * kMaxPerLane];
    __shared__ float warp_m[kDecodeWarps], warp_l[kDecodeWarps];
#pragma unroll
    for (int i = 0; i < kMaxPerLane; ++i) warp_out[warp][lane + 32 * i] = acc[i];
    if (lane == 0) {
        warp_m[warp] = m;
        warp_l[warp] = l;
    }
    __syncthreads();
    float block_m = -kInf;
    for (int w = 0; w < kDecodeWarps; ++w) block_m = fmaxf(block_m, warp_m[w]);
    const long long slot = 1LL * blockIdx.y * splits + blockIdx.x;  // [B*Hq, splits]
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float o = 0.0f;
        for (int w = 0; w < kDecodeWarps; ++w)
            if (warp_m[w] != -kInf) o += warp_out[w][d] * expf(warp_m[w] - block_m);
        partial_out[slot * D + d] = o;
    }
    if (threadIdx.x == 0) {
        float block_l = 0.0f;
        for (int w = 0; w < kDecodeWarps; ++w)
            if (warp_m[w] != -kInf) block_l += warp_l[w] * expf(warp_m[w] - block_m);
        partial_ml[slot * 2 + 0] = block_m;  // -inf when no key of the chunk is visible
        partial_ml[slot * 2 + 1] = block_l;
    }
}

// grid: B * Hq blocks, one per query row; threads stride over the D channels.
template <typename E>
__global__ void decode_combine_kernel(int D, int splits, const float* partial_out, const float* partial_ml, E* out) {
    const long long row = blockIdx.x;
    const float* ml = partial_ml + row * splits * 2;  // [splits, 2]
    float M = -kInf;
    for (int i = 0; i < splits; ++i) M = fmaxf(M, ml[2 * i]);
    float L = 0.0f;
    for (int i = 0; i < splits; ++i)
        if (ml[2 * i] != -kInf) L += ml[2 * i + 1] * expf(ml[2 * i] - M);
    const float inv_L = L > 0.0f ? 1.0f / L : 0.0f;
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float o = 0.0f;
        for (int i = 0; i < splits; ++i)
            if (ml[2 * i] != -kInf) o += partial_out[(row * splits + i) * D + d] * expf(ml[2 * i] - M);
        out[row * D + d] = from_float<E>(o * inv_L);
    }
}

}  // namespace

bool decode_split_supports(int D) { return D >= 1 && D <= 32 * kMaxPerLane; }

int decode_split_count(const AttentionShape& sh, int multiprocessors) {
    // Aim for about four blocks per multiprocessor, with at least 64 keys per chunk.
    const long long rows = 1LL * sh.B * sh.Hq;
    const long long wanted = (4LL * multiprocessors + rows - 1) / rows;
    const long long most = (sh.S + kMinKeysPerSplit - 1) / kMinKeysPerSplit;
    return int(std::max(1LL, std::min(wanted, most)));
}

std::size_t decode_partial_out_floats(const AttentionShape& sh, int splits) {
    return std::size_t(sh.B) * sh.Hq * splits * sh.D;
}
std::size_t decode_partial_ml_floats(const AttentionShape& sh, int splits) {
    return std::size_t(sh.B) * sh.Hq * splits * 2;
}

template <typename E>
void attention_decode_split(const AttentionShape& sh, const GpuMask& mask, const E* q, const E* k, const E* v, E* out,
                            int splits, float* partial_out, float* partial_ml, cudaStream_t stream) {
    const char* problem = attention_shape_problem(sh);
    if (*problem) throw CudaError(std::string("decode_split: ") + problem);
    if (sh.T != 1) throw CudaError("decode_split: one new query per sequence (T = 1) only");
    if (!decode_split_supports(sh.D)) throw CudaError("decode_split: head dim must be 1 .. 256");
    if (splits < 1) throw CudaError("decode_split: at least one split");
    const dim3 grid(splits, sh.B * sh.Hq);
    decode_split_kernel<E><<<grid, 32 * kDecodeWarps, 0, stream>>>(sh, mask, q, k, v, splits, partial_out, partial_ml,
                                                                   1.0f / sqrtf(float(sh.D)));
    CUDA_CHECK_LAUNCH();
    decode_combine_kernel<E><<<sh.B * sh.Hq, 128, 0, stream>>>(sh.D, splits, partial_out, partial_ml, out);
    CUDA_CHECK_LAUNCH();
}

template void attention_decode_split<float>(const AttentionShape&, const GpuMask&, const float*, const float*,
                                            const float*, float*, int, float*, float*, cudaStream_t);
template void attention_decode_split<bf16>(const AttentionShape&, const GpuMask&, const bf16*, const bf16*, const bf16*,
                                           bf16*, int, float*, float*, cudaStream_t);

}  // namespace anatomy::gpu
