// Decode: one new query per sequence (T = 1) over a long KV cache. A single query
// row has too little work for a GPU, so the S keys are cut into chunks, each
// reduced by its own block to a partial softmax state (m, l, O unnormalised), and
// the chunks are merged (flash-decoding):
//   M = max_i m_i,  L = sum_i l_i exp(m_i - M),  out = sum_i O_i exp(m_i - M) / L
// Decoding reads every cached key and value once at best, so its speed is memory
// bandwidth. Two versions side by side:
//   decode_split (1)  one block per (b, query head, split): each of the G = Hq / Hkv
//                     query heads of a group re-reads its KV head (G x the traffic),
//                     2-byte loads per lane with D at run time, V loads behind a
//                     per-key branch, chunks of >= 64 keys aiming at 4 blocks per
//                     SM, and a second kernel for the merge.
//   decode_group (2)  one block per (b, KV head, split) serving all G query heads:
//                     K and V read once, 16-byte loads, D and G template parameters,
//                     K and V of several keys loaded before they are used, 128 or 256
//                     keys per block, scores in the log2 domain, and the merge folded
//                     into the last block of each row to finish (an arrival counter).
//                     Bookkeeping in decode_plan.hpp (checked on the CPU).
//
// Measured speed: not yet measured on a GPU.
#include <algorithm>

#include "cuda/attention_kernels.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/decode_plan.hpp"
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
    if (1LL * sh.B * sh.Hq > 65535) throw CudaError("decode_split: B * Hq is limited to 65535 (grid y)");
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

// ============================================================================
// decode_group (version 2): one block per (b, KV head, split), all G query heads
// ============================================================================
namespace {

// 16 bytes of a row, widened to floats: 4 fp32 or 8 bf16 channels.
__device__ __forceinline__ void load_channels(const float* p, float (&x)[4]) {
    const float4 bits = *reinterpret_cast<const float4*>(p);
    x[0] = bits.x, x[1] = bits.y, x[2] = bits.z, x[3] = bits.w;
}
__device__ __forceinline__ void load_channels(const bf16* p, float (&x)[8]) {
    const uint4 bits = *reinterpret_cast<const uint4*>(p);
    const std::uint32_t words[4] = {bits.x, bits.y, bits.z, bits.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        __nv_bfloat162 pair;
        memcpy(&pair, &words[i], sizeof pair);  // a register move
        const float2 f = __bfloat1622float2(pair);
        x[2 * i] = f.x, x[2 * i + 1] = f.y;
    }
}

// grid: x = plan.splits, y = B * Hkv; block = kGroupDecodeThreads. See decode_plan.hpp.
template <typename E, int D, int G>
__global__ void __launch_bounds__(kGroupDecodeThreads)
    decode_group_kernel(AttentionShape sh, GpuMask mask, const E* q, const E* k, const E* v, DecodePlan plan,
                        float* partial_out, float* partial_ml, unsigned* arrivals, E* out, float scale_log2) {
    using Lanes = DecodeLanes<D, int(sizeof(E))>;
    constexpr int C = Lanes::channels, kLanesPerKey = Lanes::lanes_per_key, kSlots = Lanes::slots;
    constexpr int kInFlight = 4;  // keys per slot loaded before use
    static_assert(G * D <= 1024, "the warps' states must fit the shared arrays below");

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int slot = Lanes::slot_of(threadIdx.x), channel0 = Lanes::channel_of(threadIdx.x);
    const int row = blockIdx.y, b = row / sh.Hkv, kv_head = row % sh.Hkv;
    const int split = blockIdx.x;
    const int s_begin = split_begin(plan, split), s_end = split_end(plan, split, sh.S);
    const long long q_abs = mask.history;  // T = 1: the query sits at position S - 1

    const E* k_head = k + 1LL * row * sh.kv_capacity * D;  // [kv_capacity, D] of (b, kv_head)
    const E* v_head = v + 1LL * row * sh.kv_capacity * D;
    const E* q_group = q + (1LL * b * sh.Hq + kv_head * G) * D;  // q: [B, Hq, 1, D]; heads kv_head * G + g

    float q_reg[G][C], acc[G][C], m[G], l[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        load_channels(q_group + g * D + channel0, q_reg[g]);
#pragma unroll
        for (int c = 0; c < C; ++c) q_reg[g][c] *= scale_log2, acc[g][c] = 0.0f;
        m[g] = -kInf, l[g] = 0.0f;
    }

    // The chunk's keys, kInFlight steps at a time: every load of the steps first, then the arithmetic.
    if (!tile_skipped(mask, q_abs, q_abs, s_begin, s_end - 1)) {  // block-uniform
        for (int step = 0; step * kSlots < s_end - s_begin; step += kInFlight) {
            float k_row[kInFlight][C], v_row[kInFlight][C];
            int key[kInFlight];
#pragma unroll
            for (int u = 0; u < kInFlight; ++u) {
                key[u] = slot_key(s_begin, s_end, kSlots, slot, step + u);
                if (key[u] >= 0) {
                    load_channels(k_head + 1LL * key[u] * D + channel0, k_row[u]);
                    load_channels(v_head + 1LL * key[u] * D + channel0, v_row[u]);
                } else {
#pragma unroll
                    for (int c = 0; c < C; ++c) k_row[u][c] = v_row[u][c] = 0.0f;
                }
            }
#pragma unroll
            for (int u = 0; u < kInFlight; ++u) {
                const bool visible = key[u] >= 0 && mask_visible(mask, q_abs, key[u]);
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    float dot = 0.0f;
#pragma unroll
                    for (int c = 0; c < C; ++c) dot += q_reg[g][c] * k_row[u][c];
#pragma unroll
                    for (int offset = kLanesPerKey / 2; offset > 0; offset /= 2)  // the lanes of one key row
                        dot += __shfl_xor_sync(0xffffffffu, dot, offset);
                    if (visible) softmax_push(m[g], l[g], acc[g], dot, v_row[u]);
                }
            }
        }
    }

    // Merge the slots of each warp (butterfly over the lanes that hold the same channels) ...
#pragma unroll
    for (int offset = kLanesPerKey; offset < 32; offset *= 2)
#pragma unroll
        for (int g = 0; g < G; ++g) {
            float other[C];
#pragma unroll
            for (int c = 0; c < C; ++c) other[c] = __shfl_xor_sync(0xffffffffu, acc[g][c], offset);
            const float m2 = __shfl_xor_sync(0xffffffffu, m[g], offset);
            const float l2 = __shfl_xor_sync(0xffffffffu, l[g], offset);
            softmax_merge(m[g], l[g], acc[g], m2, l2, other);
        }
    // ... then the warps, in warp order, through shared memory: one state per (g, d).
    __shared__ float shared[kGroupDecodeWarps * G * D];  // [warps][G][D]; reused for the merge weights
    __shared__ float warp_m[kGroupDecodeWarps][G], warp_l[kGroupDecodeWarps][G];
    if (lane < kLanesPerKey) {
#pragma unroll
        for (int g = 0; g < G; ++g) {
#pragma unroll
            for (int c = 0; c < C; ++c) shared[(warp * G + g) * D + channel0 + c] = acc[g][c];
            if (lane == 0) warp_m[warp][g] = m[g], warp_l[warp][g] = l[g];
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < G * D; i += kGroupDecodeThreads) {
        const int g = i / D, d = i % D;
        float bm = -kInf, bl = 0.0f, bo[1] = {0.0f};
        for (int w = 0; w < kGroupDecodeWarps; ++w) {
            const float o_w[1] = {shared[(w * G + g) * D + d]};
            softmax_merge(bm, bl, bo, warp_m[w][g], warp_l[w][g], o_w);
        }
        const long long state = partial_state(row, split, g, plan.splits, G);
        partial_out[state * D + d] = bo[0];
        if (d == 0) partial_ml[state * 2] = bm, partial_ml[state * 2 + 1] = bl;
    }

    // The last block of this row to finish merges the row's chunks (threadFenceReduction's pattern).
    __shared__ bool last;
    __threadfence();  // this block's partial state is visible device-wide before it is counted
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&arrivals[row], 1u) == unsigned(plan.splits - 1);
    __syncthreads();
    if (!last) return;

    // Per query head g: M and 1 / L, a warp per head (lanes over the chunks).
    __shared__ float head_max[G], head_inv_sum[G];
    for (int g = warp; g < G; g += kGroupDecodeWarps) {
        float top = -kInf;
        for (int i = lane; i < plan.splits; i += 32)
            top = fmaxf(top, __ldcg(partial_ml + partial_state(row, i, g, plan.splits, G) * 2));
        top = warp_max(top);
        float sum = 0.0f;
        for (int i = lane; i < plan.splits; i += 32) {
            const float* ml = partial_ml + partial_state(row, i, g, plan.splits, G) * 2;
            const float m_i = __ldcg(ml);
            if (m_i != -kInf) sum += __ldcg(ml + 1) * exp2f(m_i - top);
        }
        sum = warp_sum(sum);
        if (lane == 0) head_max[g] = top, head_inv_sum[g] = sum > 0.0f ? 1.0f / sum : 0.0f;
    }
    __syncthreads();
    // Each chunk's weight 2^(m_i - M) / L, kept in shared memory when the row's chunks fit.
    const bool weights_shared = plan.splits * G <= kGroupDecodeWarps * G * D;
    if (weights_shared)
        for (int i = threadIdx.x; i < plan.splits * G; i += kGroupDecodeThreads) {
            const int g = i % G, chunk = i / G;
            const float m_i = __ldcg(partial_ml + partial_state(row, chunk, g, plan.splits, G) * 2);
            shared[i] = split_weight(m_i, head_max[g], head_inv_sum[g]);
        }
    __syncthreads();
    for (int i = threadIdx.x; i < G * D; i += kGroupDecodeThreads) {
        const int g = i / D, d = i % D;
        float o = 0.0f;
        for (int chunk = 0; chunk < plan.splits; ++chunk) {
            const long long state = partial_state(row, chunk, g, plan.splits, G);
            const float w = weights_shared ? shared[chunk * G + g]
                                           : split_weight(__ldcg(partial_ml + state * 2), head_max[g], head_inv_sum[g]);
            if (w != 0.0f) o += w * __ldcg(partial_out + state * D + d);
        }
        out[(1LL * b * sh.Hq + kv_head * G + g) * D + d] = from_float<E>(o);
    }
    if (threadIdx.x == 0) arrivals[row] = 0;  // ready for the next call on this stream
}

template <typename E, int D, int G>
void launch_decode_group(const AttentionShape& sh, const GpuMask& mask, const E* q, const E* k, const E* v, E* out,
                         const DecodePlan& plan, float* partial_out, float* partial_ml, unsigned* arrivals,
                         cudaStream_t stream) {
    const dim3 grid(plan.splits, sh.B * sh.Hkv);
    const float scale_log2 = 1.4426950408889634f / sqrtf(float(D));  // log2(e) / sqrt(D)
    decode_group_kernel<E, D, G><<<grid, kGroupDecodeThreads, 0, stream>>>(sh, mask, q, k, v, plan, partial_out,
                                                                           partial_ml, arrivals, out, scale_log2);
    CUDA_CHECK_LAUNCH();
}

template <typename E, int D>
void launch_decode_group_for(int G, const AttentionShape& sh, const GpuMask& mask, const E* q, const E* k, const E* v,
                             E* out, const DecodePlan& plan, float* partial_out, float* partial_ml, unsigned* arrivals,
                             cudaStream_t stream) {
    switch (G) {
        case 1: return launch_decode_group<E, D, 1>(sh, mask, q, k, v, out, plan, partial_out, partial_ml, arrivals, stream);
        case 2: return launch_decode_group<E, D, 2>(sh, mask, q, k, v, out, plan, partial_out, partial_ml, arrivals, stream);
        case 4: return launch_decode_group<E, D, 4>(sh, mask, q, k, v, out, plan, partial_out, partial_ml, arrivals, stream);
        case 8: return launch_decode_group<E, D, 8>(sh, mask, q, k, v, out, plan, partial_out, partial_ml, arrivals, stream);
        default: throw CudaError("decode_group: query heads per KV head must be 1, 2, 4 or 8");
    }
}

}  // namespace

bool decode_group_supports(int D, int group) {
    return (D == 8 || D == 64 || D == 128) && (group == 1 || group == 2 || group == 4 || group == 8);
}

DecodePlan decode_group_plan(const AttentionShape& sh, int multiprocessors) {
    return decode_group_plan(sh.B, sh.Hkv, sh.S, multiprocessors);
}

std::size_t decode_group_partial_out_floats(const AttentionShape& sh, const DecodePlan& plan) {
    return std::size_t(sh.B) * sh.Hq * plan.splits * sh.D;
}
std::size_t decode_group_partial_ml_floats(const AttentionShape& sh, const DecodePlan& plan) {
    return std::size_t(sh.B) * sh.Hq * plan.splits * 2;
}
std::size_t decode_group_arrival_counters(const AttentionShape& sh) { return std::size_t(sh.B) * sh.Hkv; }

template <typename E>
void attention_decode_group(const AttentionShape& sh, const GpuMask& mask, const E* q, const E* k, const E* v, E* out,
                            const DecodePlan& plan, float* partial_out, float* partial_ml, unsigned* arrivals,
                            cudaStream_t stream) {
    const char* problem = attention_shape_problem(sh);
    if (*problem) throw CudaError(std::string("decode_group: ") + problem);
    if (sh.T != 1) throw CudaError("decode_group: one new query per sequence (T = 1) only");
    const int group = sh.Hq / sh.Hkv;
    if (!decode_group_supports(sh.D, group))
        throw CudaError("decode_group: head dim " + std::to_string(sh.D) + " with " + std::to_string(group) +
                        " query heads per KV head is not compiled (D 8, 64, 128; group 1, 2, 4, 8)");
    if (1LL * sh.B * sh.Hkv > 65535) throw CudaError("decode_group: B * Hkv is limited to 65535 (grid y)");
    if (plan.splits < 1 || 1LL * plan.splits * plan.keys_per_split < sh.S)
        throw CudaError("decode_group: the plan's chunks do not cover the cache");
    switch (sh.D) {
        case 8: return launch_decode_group_for<E, 8>(group, sh, mask, q, k, v, out, plan, partial_out, partial_ml, arrivals, stream);
        case 64: return launch_decode_group_for<E, 64>(group, sh, mask, q, k, v, out, plan, partial_out, partial_ml, arrivals, stream);
        default: return launch_decode_group_for<E, 128>(group, sh, mask, q, k, v, out, plan, partial_out, partial_ml, arrivals, stream);
    }
}

template void attention_decode_group<float>(const AttentionShape&, const GpuMask&, const float*, const float*,
                                            const float*, float*, const DecodePlan&, float*, float*, unsigned*,
                                            cudaStream_t);
template void attention_decode_group<bf16>(const AttentionShape&, const GpuMask&, const bf16*, const bf16*,
                                           const bf16*, bf16*, const DecodePlan&, float*, float*, unsigned*,
                                           cudaStream_t);

}  // namespace anatomy::gpu
