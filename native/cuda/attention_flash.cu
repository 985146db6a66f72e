// FlashAttention-style forward: tiled, online softmax, the T x S matrix never
// written. Three versions side by side (see attention_kernels.hpp):
//   flash_plain  one thread per query row, scalar fp32 arithmetic (teaches the loop)
//   flash_mma    tensor cores, mma.sync m16n8k16 bf16 -> fp32 (FlashAttention-2 register
//                layout). Br = 64 (4 warps x 16 rows), Bc = 64; K and V staged through
//                registers into padded shared memory (one stage, load then compute), Q
//                fragments read from global memory once, B operands gathered with scalar
//                shared-memory loads.
//   flash_mma2   the same arithmetic with FlashAttention-2's memory path. Br = 128 (4 warps
//                x 32 rows: each K/V fragment feeds two mma), Bc = 64; Q, K, V copied by
//                cp.async into XOR-swizzled shared memory (no padding, no bank conflicts),
//                K and V double-buffered so the next unskipped tile loads while this one
//                computes; operands loaded with ldmatrix.x4 (.trans for V); 48 / 96 KB of
//                dynamic shared memory at D = 64 / 128. Registers (ptxas, sm_90, nvcc 13):
//                176 at D = 64, 255 at D = 128, no spills (flash_mma: 130 / 176).
// Notation of the paper: Br query rows per block, Bc keys per tile, running
// row maximum m, running sum l of exp(score - m), unnormalised output O.
// For each key tile:  m_new = max(m, rowmax(S_tile));  P = exp(S_tile - m_new)
//                     l = l * exp(m - m_new) + rowsum(P);  O = O * exp(m - m_new) + P V
// and at the end out = O / l.
//
// Measured speed: not yet measured on a GPU (compiled for sm_90, never run).
#include <cstdint>
#include <cstring>

#include "cuda/attention_kernels.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernel_common.cuh"
#include "cuda/mma_fragments.hpp"

namespace anatomy::gpu {
namespace {

// ============================================================================
// flash_plain: one thread per query row
// ============================================================================

constexpr int kPlainRows = 64;  // Br: query rows per block = threads per block
constexpr int kPlainKeys = 32;  // Bc: keys per shared-memory tile (K and V tiles: 2 x 32 x D fp32, 32 KB at D = 128)

// grid: x = ceil(T / Br) query tiles, y = B * Hq. Thread i of block (x, y) owns
// query row t = x * Br + i of head (b, h) = (y / Hq, y % Hq).
template <typename E, int D>
__global__ void __launch_bounds__(kPlainRows)
    flash_plain_kernel(AttentionShape sh, GpuMask mask, const E* q, const E* k, const E* v, E* out, float scale) {
    __shared__ float k_tile[kPlainKeys][D];  // keys s0 .. s0 + Bc - 1 of this KV head, as fp32
    __shared__ float v_tile[kPlainKeys][D];

    const int b = blockIdx.y / sh.Hq, h = blockIdx.y % sh.Hq;
    const int kv_head = h / (sh.Hq / sh.Hkv);  // GQA: an index, never a copy
    const int tile_first = blockIdx.x * kPlainRows;
    const int t = tile_first + threadIdx.x;
    const bool active = t < sh.T;  // the last tile may hang past T; those threads only help load
    const long long q_abs = mask.history + t;
    const long long q_first = mask.history + tile_first;
    const long long q_last = mask.history + min(sh.T, tile_first + kPlainRows) - 1;

    const long long head_row0 = (1LL * b * sh.Hkv + kv_head) * sh.kv_capacity;  // row of (b, kv_head, s = 0)
    const E* k_head = k + head_row0 * D;  // [kv_capacity, D]
    const E* v_head = v + head_row0 * D;
    const long long q_row = 1LL * blockIdx.y * sh.T + t;  // row of (b, h, t) in q and out: [B*Hq*T, D]

    float q_reg[D], o[D];
    for (int d = 0; d < D; ++d) {
        q_reg[d] = active ? to_float(q[q_row * D + d]) : 0.0f;
        o[d] = 0.0f;
    }
    float m = -kInf, l = 0.0f;

    for (int s0 = 0; s0 < sh.S; s0 += kPlainKeys) {
        const int s_last = min(sh.S, s0 + kPlainKeys) - 1;
        // The same answer for every thread of the block, so the barriers below stay uniform.
        if (tile_skipped(mask, q_first, q_last, s0, s_last)) continue;
        const bool check_cells = !tile_all_visible(mask, q_first, q_last, s0, s_last);

        __syncthreads();  // every thread has finished reading the previous tile
        for (int i = threadIdx.x; i < kPlainKeys * D; i += kPlainRows) {
            const int r = i / D, d = i % D, s = s0 + r;
            k_tile[r][d] = s < sh.S ? to_float(k_head[1LL * s * D + d]) : 0.0f;
            v_tile[r][d] = s < sh.S ? to_float(v_head[1LL * s * D + d]) : 0.0f;
        }
        __syncthreads();
        if (!active) continue;

        // Scores of this row against the tile's keys: [Bc]; masked or past S -> -inf.
        float score[kPlainKeys];
        float tile_max = -kInf;
        for (int j = 0; j < kPlainKeys; ++j) {
            const int s = s0 + j;
            float dot = 0.0f;
            for (int d = 0; d < D; ++d) dot += q_reg[d] * k_tile[j][d];
            const bool visible = s <= s_last && (!check_cells || mask_visible(mask, q_abs, s));
            score[j] = visible ? dot * scale : -kInf;
            tile_max = fmaxf(tile_max, score[j]);
        }
        if (tile_max == -kInf) continue;  // nothing visible to this row in this tile

        const float m_new = fmaxf(m, tile_max);
        const float correction = expf(m - m_new);  // exp(-inf) = 0 on the first visible tile
        l *= correction;
        for (int d = 0; d < D; ++d) o[d] *= correction;
        for (int j = 0; j < kPlainKeys; ++j) {
            const float p = expf(score[j] - m_new);  // 0 for masked keys
            l += p;
            for (int d = 0; d < D; ++d) o[d] += p * v_tile[j][d];
        }
        m = m_new;
    }
    if (!active) return;
    const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;  // a row that saw no key: zeros, as in the core
    for (int d = 0; d < D; ++d) out[q_row * D + d] = from_float<E>(o[d] * inv_l);
}

template <typename E, int D>
void launch_flash_plain(const AttentionShape& sh, const GpuMask& mask, const E* q, const E* k, const E* v, E* out,
                        cudaStream_t stream) {
    const dim3 grid((sh.T + kPlainRows - 1) / kPlainRows, sh.B * sh.Hq);
    flash_plain_kernel<E, D><<<grid, kPlainRows, 0, stream>>>(sh, mask, q, k, v, out, 1.0f / sqrtf(float(D)));
    CUDA_CHECK_LAUNCH();
}

// ============================================================================
// flash_mma: tensor cores (mma.sync m16n8k16, bf16 inputs, fp32 accumulators)
// ============================================================================
//
// Fragment layouts of mma.sync.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"),
// with g = lane / 4 (group) and c = lane % 4 (thread in group):
//   A 16x16 (row-major), 4 x b32, each two bf16 (the lower-indexed in the low half):
//     a0: (row g,     cols 2c, 2c+1)   a1: (row g + 8, cols 2c, 2c+1)
//     a2: (row g,     cols 2c+8, +9)   a3: (row g + 8, cols 2c+8, +9)
//   B 16x8 (column-major), 2 x b32:  b0: (rows 2c, 2c+1, col g)   b1: (rows 2c+8, 2c+9, col g)
//   C 16x8 fp32, 4 floats:  c0, c1: (row g, cols 2c, 2c+1)   c2, c3: (row g + 8, cols 2c, 2c+1)
// Two adjacent 16x8 C tiles (keys 8j .. 8j+15) hold exactly an A fragment's 16x16
// block in the same thread: P goes from the S accumulators to the P @ V operand
// in registers (FlashAttention-2's trick).

constexpr int kMmaWarps = 4;
constexpr int kMmaRows = 16 * kMmaWarps;  // Br = 64: each warp owns 16 query rows
constexpr int kMmaKeys = 64;              // Bc = 64 keys per tile

__device__ __forceinline__ void mma_bf16_16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                               std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();  // bf16 mma.sync needs sm_80 or newer; the launcher refuses older devices
#endif
}

// Two bf16 in one register, `low` in bits 0..15.
__device__ __forceinline__ std::uint32_t pack_bf16(bf16 low, bf16 high) {
    const __nv_bfloat162 pair = __halves2bfloat162(low, high);
    std::uint32_t bits;
    memcpy(&bits, &pair, sizeof bits);
    return bits;
}
__device__ __forceinline__ std::uint32_t pack_floats(float low, float high) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
    std::uint32_t bits;
    memcpy(&bits, &pair, sizeof bits);
    return bits;
}
// Channels (c, c+1) of row `row` of a [rows, D] bf16 matrix, 0 past the last row.
__device__ __forceinline__ std::uint32_t load_pair(const bf16* matrix, int row, int rows, int D, int c) {
    if (row >= rows) return 0u;
    std::uint32_t bits;
    memcpy(&bits, matrix + 1LL * row * D + c, sizeof bits);  // 4-byte aligned: D and c are even
    return bits;
}

// grid: x = ceil(T / Br) query tiles (last tile first, so the longest causal rows
// start early), y = B * Hq. 128 threads = 4 warps.
template <int D>
__global__ void __launch_bounds__(32 * kMmaWarps)
    flash_mma_kernel(AttentionShape sh, GpuMask mask, const bf16* q, const bf16* k, const bf16* v, bf16* out,
                     float scale_log2) {
    static_assert(D % 16 == 0, "D must be a multiple of the mma k-step (16)");
    // Rows padded by 8 bf16 (16 B): the fragment loads of the 8 groups then fall
    // in different banks, and every row start stays 16-byte aligned for uint4 stores.
    constexpr int kStride = D + 8;
    __shared__ __align__(16) bf16 k_tile[kMmaKeys * kStride];  // [Bc, D] (+pad)
    __shared__ __align__(16) bf16 v_tile[kMmaKeys * kStride];  // [Bc, D] (+pad)

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, c = lane % 4;
    const int b = blockIdx.y / sh.Hq, h = blockIdx.y % sh.Hq;
    const int kv_head = h / (sh.Hq / sh.Hkv);
    const int tile = gridDim.x - 1 - blockIdx.x;
    const int tile_first = tile * kMmaRows;
    const int row0 = tile_first + warp * 16 + g;  // this thread's two query rows: row0, row0 + 8
    const int row1 = row0 + 8;
    const long long q_first = mask.history + tile_first;
    const long long q_last = mask.history + min(sh.T, tile_first + kMmaRows) - 1;

    const bf16* q_head = q + 1LL * blockIdx.y * sh.T * D;  // [T, D] of (b, h)
    bf16* out_head = out + 1LL * blockIdx.y * sh.T * D;
    const long long head_row0 = (1LL * b * sh.Hkv + kv_head) * sh.kv_capacity;
    const bf16* k_head = k + head_row0 * D;  // [kv_capacity, D]
    const bf16* v_head = v + head_row0 * D;

    // Q as A fragments for the D/16 k-steps of Q K^T, loaded once: [D/16][4] registers.
    std::uint32_t q_frag[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        q_frag[kk][0] = load_pair(q_head, row0, sh.T, D, kk * 16 + 2 * c);
        q_frag[kk][1] = load_pair(q_head, row1, sh.T, D, kk * 16 + 2 * c);
        q_frag[kk][2] = load_pair(q_head, row0, sh.T, D, kk * 16 + 2 * c + 8);
        q_frag[kk][3] = load_pair(q_head, row1, sh.T, D, kk * 16 + 2 * c + 8);
    }
    float o[D / 8][4];  // O [16, D] of this warp as D/8 C tiles
#pragma unroll
    for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m[2] = {-kInf, -kInf};  // rows row0, row1 (log2 domain)
    float l[2] = {0.0f, 0.0f};

    for (int s0 = 0; s0 < sh.S; s0 += kMmaKeys) {
        const int s_last = min(sh.S, s0 + kMmaKeys) - 1;
        if (tile_skipped(mask, q_first, q_last, s0, s_last)) continue;  // block-uniform
        const bool check_cells = s0 + kMmaKeys > sh.S || !tile_all_visible(mask, q_first, q_last, s0, s_last);

        // Stage K and V rows s0 .. s0 + Bc - 1 in shared memory, 8 bf16 (16 B) per load; rows past S are zeros.
        __syncthreads();
        constexpr int kChunks = D / 8;  // 16-byte chunks per row
        for (int i = threadIdx.x; i < kMmaKeys * kChunks; i += 32 * kMmaWarps) {
            const int r = i / kChunks, chunk = i % kChunks, s = s0 + r;
            uint4 k_bits = make_uint4(0, 0, 0, 0), v_bits = make_uint4(0, 0, 0, 0);
            if (s < sh.S) {
                k_bits = *reinterpret_cast<const uint4*>(k_head + 1LL * s * D + chunk * 8);
                v_bits = *reinterpret_cast<const uint4*>(v_head + 1LL * s * D + chunk * 8);
            }
            *reinterpret_cast<uint4*>(k_tile + r * kStride + chunk * 8) = k_bits;
            *reinterpret_cast<uint4*>(v_tile + r * kStride + chunk * 8) = v_bits;
        }
        __syncthreads();

        // S = Q K^T for this warp's 16 rows and the tile's 64 keys: 8 C tiles of 8 keys.
        // B operand (k = channel, n = key): b0 = K[key 8j+g][channels 2c, 2c+1], contiguous in a K row.
        float s_acc[kMmaKeys / 8][4];
#pragma unroll
        for (int j = 0; j < kMmaKeys / 8; ++j) {
            s_acc[j][0] = s_acc[j][1] = s_acc[j][2] = s_acc[j][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                const bf16* k_row = k_tile + (j * 8 + g) * kStride + kk * 16 + 2 * c;
                std::uint32_t b0, b1;
                memcpy(&b0, k_row, sizeof b0);
                memcpy(&b1, k_row + 8, sizeof b1);
                mma_bf16_16816(s_acc[j], q_frag[kk], b0, b1);
            }
        }

        // Scale into the log2 domain (exp(x) = exp2(x * log2 e)), mask, and take each row's tile maximum.
        float tile_max[2] = {-kInf, -kInf};
#pragma unroll
        for (int j = 0; j < kMmaKeys / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int row = e < 2 ? row0 : row1;
                const int s = s0 + j * 8 + 2 * c + (e & 1);
                float x = s_acc[j][e] * scale_log2;
                if (check_cells && (s >= sh.S || !mask_visible(mask, mask.history + row, s))) x = -kInf;
                s_acc[j][e] = x;
                tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
            }
        // A row's 64 values are spread over the 4 threads of its group: reduce across lanes c = 0..3.
        float base[2], correction[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 1));
            tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 2));
            const float m_new = fmaxf(m[i], tile_max[i]);
            base[i] = m_new == -kInf ? 0.0f : m_new;  // nothing visible yet: avoid -inf - -inf
            correction[i] = exp2f(m[i] - base[i]);            // 0 while m = -inf
            m[i] = m_new;
        }
        float row_sum[2] = {0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < kMmaKeys / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s_acc[j][e] = exp2f(s_acc[j][e] - base[e / 2]);  // P, fp32; masked cells give 0
                row_sum[e / 2] += s_acc[j][e];
            }
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 1);
            row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 2);
            l[i] = l[i] * correction[i] + row_sum[i];
        }
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            o[n][0] *= correction[0];
            o[n][1] *= correction[0];
            o[n][2] *= correction[1];
            o[n][3] *= correction[1];
        }

        // O += P V over the tile's 64 keys in 4 k-steps of 16. A operand: P tiles 2kk and 2kk+1
        // rounded to bf16. B operand (k = key, n = channel): b0 = V[keys 16kk+2c, +1][channel 8n+g].
#pragma unroll
        for (int kk = 0; kk < kMmaKeys / 16; ++kk) {
            const std::uint32_t p_frag[4] = {pack_floats(s_acc[2 * kk][0], s_acc[2 * kk][1]),
                                             pack_floats(s_acc[2 * kk][2], s_acc[2 * kk][3]),
                                             pack_floats(s_acc[2 * kk + 1][0], s_acc[2 * kk + 1][1]),
                                             pack_floats(s_acc[2 * kk + 1][2], s_acc[2 * kk + 1][3])};
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {
                const bf16* v_col = v_tile + (kk * 16 + 2 * c) * kStride + n * 8 + g;
                const std::uint32_t b0 = pack_bf16(v_col[0], v_col[kStride]);
                const std::uint32_t b1 = pack_bf16(v_col[8 * kStride], v_col[9 * kStride]);
                mma_bf16_16816(o[n], p_frag, b0, b1);
            }
        }
    }

    // out = O / l, written as bf16 pairs: o[n][0..1] -> row0, channels 8n + 2c, +1; o[n][2..3] -> row1.
    const float inv_l0 = l[0] > 0.0f ? 1.0f / l[0] : 0.0f;
    const float inv_l1 = l[1] > 0.0f ? 1.0f / l[1] : 0.0f;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
        const int channel = n * 8 + 2 * c;
        if (row0 < sh.T) {
            const std::uint32_t bits = pack_floats(o[n][0] * inv_l0, o[n][1] * inv_l0);
            memcpy(out_head + 1LL * row0 * D + channel, &bits, sizeof bits);
        }
        if (row1 < sh.T) {
            const std::uint32_t bits = pack_floats(o[n][2] * inv_l1, o[n][3] * inv_l1);
            memcpy(out_head + 1LL * row1 * D + channel, &bits, sizeof bits);
        }
    }
}

template <int D>
void launch_flash_mma(const AttentionShape& sh, const GpuMask& mask, const bf16* q, const bf16* k, const bf16* v,
                      bf16* out, cudaStream_t stream) {
    const dim3 grid((sh.T + kMmaRows - 1) / kMmaRows, sh.B * sh.Hq);
    const float scale_log2 = 1.4426950408889634f / sqrtf(float(D));  // log2(e) / sqrt(D)
    flash_mma_kernel<D><<<grid, 32 * kMmaWarps, 0, stream>>>(sh, mask, q, k, v, out, scale_log2);
    CUDA_CHECK_LAUNCH();
}

// ============================================================================
// flash_mma2: cp.async double buffering, ldmatrix, 32 query rows per warp
// ============================================================================
//
// The loop of flash_mma with FlashAttention-2's memory path:
//   - Q [Br, D], K and V [Bc, D] tiles are copied to shared memory with cp.async
//     (16 B, no register staging). K and V have two stages: while the warps compute
//     on one, the next tile that the mask does not skip is already being copied
//     into the other (commit_group / wait_group).
//   - Operands reach the registers through ldmatrix.x4 (four 8x8 matrices per
//     instruction; .trans for V, whose mma operand is the transpose of its rows).
//   - Rows are XOR-swizzled in 16-byte chunks (mma_fragments.hpp), so both the
//     cp.async writes and the ldmatrix reads are bank-conflict free without padding.
//   - Each warp owns 32 query rows (two m16 tiles), so every K and V fragment it
//     loads feeds two mma instead of one.
// Shared memory: Q Br*D + 2 stages * (K + V) Bc*D bf16 = 48 KB at D = 64, 96 KB at D = 128
// (dynamic, above the 48 KB default: cudaFuncSetAttribute).

// Tile geometry (kMma2Warps, kMma2Threads, kMma2WarpRows, kMma2Rows = Br, kMma2Keys = Bc):
// mma_fragments.hpp, shared with the fragment test.

template <int D>
constexpr int mma2_smem_bytes() {
    return (kMma2Rows * D + 2 * 2 * kMma2Keys * D) * int(sizeof(bf16));
}

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronous. src_bytes = 0 reads nothing and writes zeros.
__device__ __forceinline__ void cp_async_16(void* smem, const void* global, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(global),
                 "r"(src_bytes));
#else
    __trap();
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
// Wait until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
#endif
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const bf16* row_address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_address(row_address)));
#else
    __trap();
#endif
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const bf16* row_address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_address(row_address)));
#else
    __trap();
#endif
}

// Two floats rounded to bf16 in one register, `low` in bits 0..15 (cvt puts its first source in the high half).
__device__ __forceinline__ std::uint32_t pack_bf16x2(float low, float high) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    std::uint32_t bits;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(bits) : "f"(high), "f"(low));
    return bits;
#else
    __trap();
    return 0u;
#endif
}

// Copy rows row0 .. row0 + rows - 1 of a [limit, D] matrix into a swizzled [rows, D]
// tile; rows at or past `limit` become zeros (src-size 0: nothing is read).
template <int D, int rows>
__device__ __forceinline__ void cp_async_tile(bf16* tile, const bf16* matrix, int row0, int limit) {
    constexpr int kSteps = rows * (D / 8) / kMma2Threads;
    static_assert(kSteps * kMma2Threads == rows * (D / 8), "the block copies whole tiles");
    int thread = threadIdx.x;
    asm volatile("" : "+r"(thread));
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
        const TileChunk at = cp_async_chunk(thread, step, kMma2Threads, D);
        const bool inside = row0 + at.row < limit;
        const bf16* src = matrix + 1LL * (inside ? row0 + at.row : 0) * D + at.chunk * 8;  // a valid address either way
        cp_async_16(tile + tile_offset(at, D), src, inside ? 16 : 0);
    }
}

// grid: x = ceil(T / Br) query tiles (last first, as flash_mma), y = B * Hq. 128 threads = 4 warps;
// warp w owns query rows tile_first + 32w .. tile_first + 32w + 31 as two m16 tiles mt = 0, 1.
// Thread (g, c) = (lane / 4, lane % 4) holds, per m16 tile, rows +g and +g+8 of the C fragments.
template <int D>
__global__ void __launch_bounds__(kMma2Threads)
    flash_mma2_kernel(AttentionShape sh, GpuMask mask, const bf16* q, const bf16* k, const bf16* v, bf16* out,
                      float scale_log2) {
    static_assert(D % 16 == 0 && D / 8 <= 16, "D: a multiple of the mma k-step, at most 128");
    extern __shared__ __align__(128) unsigned char smem_raw[];
    bf16* q_tile = reinterpret_cast<bf16*>(smem_raw);  // [Br, D] swizzled
    bf16* k_tiles = q_tile + kMma2Rows * D;           // [2 stages][Bc, D] swizzled
    bf16* v_tiles = k_tiles + 2 * kMma2Keys * D;      // [2 stages][Bc, D] swizzled

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, c = lane % 4;
    const int b = blockIdx.y / sh.Hq, h = blockIdx.y % sh.Hq;
    const int kv_head = h / (sh.Hq / sh.Hkv);
    const int tile_first = (gridDim.x - 1 - blockIdx.x) * kMma2Rows;
    const int warp_row0 = warp * kMma2WarpRows;  // within the tile

    // This lane's ldmatrix row address (elements from the tile start) at k-step 0, rows +0 (mma_fragments.hpp).
    int q_lane = tile_offset(ldmatrix_q_chunk(lane, warp_row0, 0), D);
    int k_lane = tile_offset(ldmatrix_k_chunk(lane, 0, 0), D);
    int v_lane = tile_offset(ldmatrix_v_trans_chunk(lane, 0, 0), D);

    const bf16* q_head = q + 1LL * blockIdx.y * sh.T * D;  // [T, D] of (b, h)
    const long long head_row0 = (1LL * b * sh.Hkv + kv_head) * sh.kv_capacity;
    const bf16* k_head = k + head_row0 * D;  // [kv_capacity, D]
    const bf16* v_head = v + head_row0 * D;

    // Key tiles j = 0 .. n_tiles - 1 (keys 64j .. 64j + 63). The pipeline walks only
    // the tiles the mask does not skip; sink_window leaves a gap between its sink
    // tiles and its window tiles, so the next one is searched, not assumed.
    const int n_tiles = (sh.S + kMma2Keys - 1) / kMma2Keys;
    auto next_tile = [&](int j, int first_row) {
        const long long q_first = mask.history + first_row;  // the block's rows, for skipping whole tiles
        const long long q_last = mask.history + min(sh.T, first_row + kMma2Rows) - 1;
        for (++j; j < n_tiles; ++j)
            if (!tile_skipped(mask, q_first, q_last, 1LL * j * kMma2Keys, min(sh.S, (j + 1) * kMma2Keys) - 1)) break;
        return j;
    };

    // Prologue: Q and the first key tile in one group.
    int tile = next_tile(-1, tile_first);
    cp_async_tile<D, kMma2Rows>(q_tile, q_head, tile_first, sh.T);
    if (tile < n_tiles) {
        cp_async_tile<D, kMma2Keys>(k_tiles, k_head, tile * kMma2Keys, sh.S);
        cp_async_tile<D, kMma2Keys>(v_tiles, v_head, tile * kMma2Keys, sh.S);
    }
    cp_async_commit();

    float o[2][D / 8][4];  // O [32, D] of this warp: per m16 tile, D/8 C tiles
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int n = 0; n < D / 8; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.0f;
    float m[2][2] = {{-kInf, -kInf}, {-kInf, -kInf}};  // [mt][rows +g, +g+8], log2 domain
    float l[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};

    for (int stage = 0; tile < n_tiles; stage ^= 1) {
        // Recomputed per tile from an opaque copy: 64-bit row bounds held across the loop cost registers O needs.
        int row_first = tile_first;
        asm volatile("" : "+r"(row_first));
        const int next = next_tile(tile, row_first);
        if (next < n_tiles) {  // block-uniform: every thread takes the same branch
            cp_async_tile<D, kMma2Keys>(k_tiles + (stage ^ 1) * kMma2Keys * D, k_head, next * kMma2Keys, sh.S);
            cp_async_tile<D, kMma2Keys>(v_tiles + (stage ^ 1) * kMma2Keys * D, v_head, next * kMma2Keys, sh.S);
        }
        cp_async_commit();  // possibly empty: keeps "all but the newest group" meaning "this tile"
        cp_async_wait<1>();
        __syncthreads();  // every thread's copies of this tile (and Q) have landed

        const int s0 = tile * kMma2Keys, s_last = min(sh.S, s0 + kMma2Keys) - 1;
        const bf16* k_tile = k_tiles + stage * kMma2Keys * D;
        const bf16* v_tile = v_tiles + stage * kMma2Keys * D;
        // An empty asm the compiler cannot see through: without it the XORs below are hoisted
        // out of the tile loop, one register per (operand, k-step), and O spills at D = 128.
        asm volatile("" : "+r"(q_lane), "+r"(k_lane), "+r"(v_lane));
        const bool warp_active = row_first + warp_row0 < sh.T;
        const long long warp_q_first = mask.history + row_first + warp_row0;  // the warp's rows
        const long long warp_q_last = mask.history + min(sh.T, row_first + warp_row0 + kMma2WarpRows) - 1;
        // A warp whose 32 rows all lie past T has nothing to compute. (A warp whose rows see none of
        // this tile, on the causal diagonal, computes it anyway: P = 0 leaves m, l, O as they are.
        // Skipping it there too cost 8 bytes of spills at D = 128 with nvcc 13.)
        if (warp_active) {
            const bool check_cells =
                s0 + kMma2Keys > sh.S || !tile_all_visible(mask, warp_q_first, warp_q_last, s0, s_last);

            // S = Q K^T: [32, 64] per warp as s_acc[mt][j], j = key n-tile of 8.
            float s_acc[2][kMma2Keys / 8][4];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt)
#pragma unroll
                for (int j = 0; j < kMma2Keys / 8; ++j)
                    s_acc[mt][j][0] = s_acc[mt][j][1] = s_acc[mt][j][2] = s_acc[mt][j][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                std::uint32_t q_frag[2][4];  // A: rows of m16 tile mt, channels 16kk .. 16kk + 15
#pragma unroll
                for (int mt = 0; mt < 2; ++mt)
                    ldmatrix_x4(q_frag[mt], q_tile + (step_channels(q_lane, kk) + 16 * mt * D));
#pragma unroll
                for (int j2 = 0; j2 < kMma2Keys / 16; ++j2) {
                    std::uint32_t k_frag[4];  // B of key n-tiles 2j2 ({0, 1}) and 2j2 + 1 ({2, 3})
                    ldmatrix_x4(k_frag, k_tile + (step_channels(k_lane, kk) + 16 * j2 * D));
#pragma unroll
                    for (int mt = 0; mt < 2; ++mt) {
                        mma_bf16_16816(s_acc[mt][2 * j2], q_frag[mt], k_frag[0], k_frag[1]);
                        mma_bf16_16816(s_acc[mt][2 * j2 + 1], q_frag[mt], k_frag[2], k_frag[3]);
                    }
                }
            }

            // Online softmax, as flash_mma, for this thread's 4 rows (mt, i): row warp_row0 + 16mt + 8i + g.
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                float tile_max[2] = {-kInf, -kInf};
#pragma unroll
                for (int j = 0; j < kMma2Keys / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const long long q_abs = warp_q_first + 16 * mt + 8 * (e / 2) + g;
                        const int s = s0 + j * 8 + 2 * c + (e & 1);
                        float x = s_acc[mt][j][e] * scale_log2;
                        if (check_cells && (s >= sh.S || !mask_visible(mask, q_abs, s))) x = -kInf;
                        s_acc[mt][j][e] = x;
                        tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
                    }
                float base[2], correction[2], row_sum[2] = {0.0f, 0.0f};
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 1));
                    tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(0xffffffffu, tile_max[i], 2));
                    const float m_new = fmaxf(m[mt][i], tile_max[i]);
                    base[i] = m_new == -kInf ? 0.0f : m_new;  // nothing visible yet: avoid -inf - -inf
                    correction[i] = exp2f(m[mt][i] - base[i]);  // 0 while m = -inf
                    m[mt][i] = m_new;
                }
#pragma unroll
                for (int j = 0; j < kMma2Keys / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        s_acc[mt][j][e] = exp2f(s_acc[mt][j][e] - base[e / 2]);  // P, fp32; masked cells give 0
                        row_sum[e / 2] += s_acc[mt][j][e];
                    }
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 1);
                    row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 2);
                    l[mt][i] = l[mt][i] * correction[i] + row_sum[i];
                }
#pragma unroll
                for (int n = 0; n < D / 8; ++n) {
                    o[mt][n][0] *= correction[0];
                    o[mt][n][1] *= correction[0];
                    o[mt][n][2] *= correction[1];
                    o[mt][n][3] *= correction[1];
                }
            }

            // O += P V in 4 k-steps of 16 keys. A: S tiles 2kk, 2kk + 1 rounded to bf16 in registers
            // (FlashAttention-2's trick, as flash_mma). B: V via ldmatrix.trans, 16 channels per load.
#pragma unroll
            for (int kk = 0; kk < kMma2Keys / 16; ++kk) {
                std::uint32_t p_frag[2][4];
#pragma unroll
                for (int mt = 0; mt < 2; ++mt) {
                    p_frag[mt][0] = pack_bf16x2(s_acc[mt][2 * kk][0], s_acc[mt][2 * kk][1]);
                    p_frag[mt][1] = pack_bf16x2(s_acc[mt][2 * kk][2], s_acc[mt][2 * kk][3]);
                    p_frag[mt][2] = pack_bf16x2(s_acc[mt][2 * kk + 1][0], s_acc[mt][2 * kk + 1][1]);
                    p_frag[mt][3] = pack_bf16x2(s_acc[mt][2 * kk + 1][2], s_acc[mt][2 * kk + 1][3]);
                }
#pragma unroll
                for (int n2 = 0; n2 < D / 16; ++n2) {
                    std::uint32_t v_frag[4];  // B of channel n-tiles 2n2 ({0, 1}) and 2n2 + 1 ({2, 3})
                    ldmatrix_x4_trans(v_frag, v_tile + (step_channels(v_lane, n2) + 16 * kk * D));
#pragma unroll
                    for (int mt = 0; mt < 2; ++mt) {
                        mma_bf16_16816(o[mt][2 * n2], p_frag[mt], v_frag[0], v_frag[1]);
                        mma_bf16_16816(o[mt][2 * n2 + 1], p_frag[mt], v_frag[2], v_frag[3]);
                    }
                }
            }
        }
        __syncthreads();  // every warp is done with this stage before the next iteration refills it
        tile = next;
    }
    cp_async_wait<0>();  // nothing left in flight at exit (only an empty group can remain)

    // out = O / l as bf16 pairs, one 32-bit store each: o[mt][n][0..1] -> row +g, channels 8n + 2c, +1;
    // o[mt][n][2..3] -> row +g+8. Rows past T are not written.
    bf16* out_head = out + 1LL * blockIdx.y * sh.T * D;  // [T, D] of (b, h)
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int row = tile_first + warp_row0 + 16 * mt + 8 * i + g;
            if (row >= sh.T) continue;
            const float inv_l = l[mt][i] > 0.0f ? 1.0f / l[mt][i] : 0.0f;  // a row that saw no key: zeros
            std::uint32_t* out_row = reinterpret_cast<std::uint32_t*>(out_head + 1LL * row * D);  // 4-byte aligned
#pragma unroll
            for (int n = 0; n < D / 8; ++n)
                out_row[n * 4 + c] = pack_bf16x2(o[mt][n][2 * i] * inv_l, o[mt][n][2 * i + 1] * inv_l);
        }
}

template <int D>
void launch_flash_mma2(const AttentionShape& sh, const GpuMask& mask, const bf16* q, const bf16* k, const bf16* v,
                       bf16* out, cudaStream_t stream) {
    constexpr int kSmem = mma2_smem_bytes<D>();
    int device = 0, smem_optin = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (kSmem > smem_optin)
        throw CudaError("flash_mma2: needs " + std::to_string(kSmem) + " bytes of shared memory per block, the device "
                        "allows " + std::to_string(smem_optin));
    CUDA_CHECK(cudaFuncSetAttribute(flash_mma2_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    const dim3 grid((sh.T + kMma2Rows - 1) / kMma2Rows, sh.B * sh.Hq);
    const float scale_log2 = 1.4426950408889634f / sqrtf(float(D));  // log2(e) / sqrt(D)
    flash_mma2_kernel<D><<<grid, kMma2Threads, kSmem, stream>>>(sh, mask, q, k, v, out, scale_log2);
    CUDA_CHECK_LAUNCH();
}

void require_usable(const AttentionShape& sh, const char* kernel) {
    const char* problem = attention_shape_problem(sh);
    if (*problem) throw CudaError(std::string(kernel) + ": " + problem);
    if (sh.B * sh.Hq > 65535) throw CudaError(std::string(kernel) + ": B * Hq is limited to 65535 (grid y)");
}

}  // namespace

bool flash_plain_supports(int D) { return D == 8 || D == 64 || D == 128; }
bool flash_mma_supports(int D) { return D == 64 || D == 128; }
bool flash_mma2_supports(int D) { return D == 64 || D == 128; }

template <typename E>
void attention_flash_plain(const AttentionShape& sh, const GpuMask& mask, const E* q, const E* k, const E* v, E* out,
                           cudaStream_t stream) {
    require_usable(sh, "flash_plain");
    switch (sh.D) {
        case 8: return launch_flash_plain<E, 8>(sh, mask, q, k, v, out, stream);
        case 64: return launch_flash_plain<E, 64>(sh, mask, q, k, v, out, stream);
        case 128: return launch_flash_plain<E, 128>(sh, mask, q, k, v, out, stream);
        default: throw CudaError("flash_plain: head dim " + std::to_string(sh.D) + " is not compiled (8, 64, 128)");
    }
}

void attention_flash_mma(const AttentionShape& sh, const GpuMask& mask, const bf16* q, const bf16* k, const bf16* v,
                         bf16* out, cudaStream_t stream) {
    require_usable(sh, "flash_mma");
    int device = 0, major = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 8) throw CudaError("flash_mma: bf16 tensor cores need compute capability 8.0 or newer");
    switch (sh.D) {
        case 64: return launch_flash_mma<64>(sh, mask, q, k, v, out, stream);
        case 128: return launch_flash_mma<128>(sh, mask, q, k, v, out, stream);
        default: throw CudaError("flash_mma: head dim " + std::to_string(sh.D) + " is not compiled (64, 128)");
    }
}

void attention_flash_mma2(const AttentionShape& sh, const GpuMask& mask, const bf16* q, const bf16* k, const bf16* v,
                          bf16* out, cudaStream_t stream) {
    require_usable(sh, "flash_mma2");
    int device = 0, major = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 8)
        throw CudaError("flash_mma2: cp.async, ldmatrix and bf16 tensor cores need compute capability 8.0 or newer");
    // cp.async moves 16 bytes at a time: rows are D * 2 bytes (a multiple of 16), so the bases must be 16-byte aligned.
    for (const void* p : {static_cast<const void*>(q), static_cast<const void*>(k), static_cast<const void*>(v),
                          static_cast<const void*>(out)})
        if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
            throw CudaError("flash_mma2: q, k, v and out must be 16-byte aligned (cp.async copies 16 bytes)");
    switch (sh.D) {
        case 64: return launch_flash_mma2<64>(sh, mask, q, k, v, out, stream);
        case 128: return launch_flash_mma2<128>(sh, mask, q, k, v, out, stream);
        default: throw CudaError("flash_mma2: head dim " + std::to_string(sh.D) + " is not compiled (64, 128)");
    }
}

template void attention_flash_plain<float>(const AttentionShape&, const GpuMask&, const float*, const float*,
                                           const float*, float*, cudaStream_t);
template void attention_flash_plain<bf16>(const AttentionShape&, const GpuMask&, const bf16*, const bf16*, const bf16*,
                                          bf16*, cudaStream_t);

}  // namespace anatomy::gpu
