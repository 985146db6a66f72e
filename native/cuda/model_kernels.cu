// The decoder's non-attention operations, one small kernel each (model_kernels.hpp).
// Measured speed: not yet measured on a GPU (they are a small share of a forward).
#include <cmath>

#include "cuda/cuda_check.hpp"
#include "cuda/kernel_common.cuh"
#include "cuda/model_kernels.hpp"

namespace anatomy::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(long long n) { return unsigned((n + kThreads - 1) / kThreads); }

// One thread per element of x: [rows, D].
__global__ void embedding_gather_kernel(const float* table, const std::int32_t* ids, float* x, int rows, int D) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1LL * rows * D) return;
    const long long r = i / D, d = i % D;
    x[i] = table[1LL * ids[r] * D + d];
}

// One block per row of x: [rows, D]; the block sums x^2 (warps, then shared memory).
__global__ void __launch_bounds__(kThreads) rms_norm_kernel(const float* x, const float* scale, float* y, int D, float eps) {
    const float* in = x + 1LL * blockIdx.x * D;
    float* out = y + 1LL * blockIdx.x * D;
    float sum_sq = 0.0f;
    for (int d = threadIdx.x; d < D; d += blockDim.x) sum_sq += in[d] * in[d];
    sum_sq = warp_sum(sum_sq);
    __shared__ float per_warp[kThreads / 32];
    __shared__ float inv_rms;
    if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = sum_sq;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < int(blockDim.x / 32); ++w) total += per_warp[w];
        inv_rms = 1.0f / sqrtf(total / float(D) + eps);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < D; d += blockDim.x) out[d] = in[d] * inv_rms * scale[d];
}

// One thread per rotated pair: index = ((b * T + t) * H + h) * (dh / 2) + i over x: [B, T, H, dh].
__global__ void rope_kernel(float* x, int B, int T, int H, int dh, long long position0, double theta, bool half_split) {
    const int half = dh / 2;
    const long long n = 1LL * B * T * H * half;
    const long long index = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n) return;
    const int i = int(index % half);
    const long long row = index / half;          // (b * T + t) * H + h
    const int t = int((row / H) % T);
    const double inv_freq = pow(theta, -2.0 * double(i) / double(dh));
    const double angle = double(position0 + t) * inv_freq;
    const float c = float(cos(angle)), s = float(sin(angle));
    float* head = x + row * dh;
    const int first = half_split ? i : 2 * i, second = half_split ? i + half : 2 * i + 1;
    const float a = head[first], b = head[second];
    head[first] = a * c - b * s;
    head[second] = a * s + b * c;
}

// One thread per element of heads: [B, H, T, dh], read from x: [B, T, H, dh].
__global__ void split_heads_kernel(const float* x, float* heads, int B, int T, int H, int dh) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1LL * B * H * T * dh) return;
    const int d = int(i % dh);
    const int t = int((i / dh) % T);
    const int h = int((i / (1LL * dh * T)) % H);
    const long long b = i / (1LL * dh * T * H);
    heads[i] = x[((b * T + t) * H + h) * dh + d];
}

// One thread per element of x: [B, T, H, dh], read from heads: [B, H, T, dh].
__global__ void merge_heads_kernel(const float* heads, float* x, int B, int T, int H, int dh) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1LL * B * T * H * dh) return;
    const int d = int(i % dh);
    const int h = int((i / dh) % H);
    const int t = int((i / (1LL * dh * H)) % T);
    const long long b = i / (1LL * dh * H * T);
    x[i] = heads[((b * H + h) * T + t) * dh + d];
}

// One thread per element of fresh: [B, T, Hkv, dh] -> cache[b, h, position0 + t, d].
__global__ void append_to_cache_kernel(const float* fresh, float* cache, int B, int T, int Hkv, int dh, int capacity,
                                       long long position0) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1LL * B * T * Hkv * dh) return;
    const int d = int(i % dh);
    const int h = int((i / dh) % Hkv);
    const int t = int((i / (1LL * dh * Hkv)) % T);
    const long long b = i / (1LL * dh * Hkv * T);
    cache[((b * Hkv + h) * capacity + position0 + t) * dh + d] = fresh[i];
}

__global__ void silu_multiply_kernel(const float* gate, const float* up, float* hidden, long long n) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float a = gate[i];
    hidden[i] = a / (1.0f + expf(-a)) * up[i];
}

__global__ void residual_add_kernel(float* x, const float* update, long long n) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += update[i];
}

__global__ void float_to_bf16_kernel(const float* in, __nv_bfloat16* out, long long n) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void bf16_to_float_kernel(const __nv_bfloat16* in, float* out, long long n) {
    const long long i = 1LL * blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __bfloat162float(in[i]);
}

}  // namespace

void embedding_gather(const float* table, const std::int32_t* ids, float* x, int rows, int D, cudaStream_t stream) {
    embedding_gather_kernel<<<blocks_for(1LL * rows * D), kThreads, 0, stream>>>(table, ids, x, rows, D);
    CUDA_CHECK_LAUNCH();
}

void rms_norm(const float* x, const float* scale, float* y, int rows, int D, float eps, cudaStream_t stream) {
    rms_norm_kernel<<<rows, kThreads, 0, stream>>>(x, scale, y, D, eps);
    CUDA_CHECK_LAUNCH();
}

void rope_inplace(float* x, int B, int T, int H, int dh, long long position0, double theta, bool half_split,
                  cudaStream_t stream) {
    rope_kernel<<<blocks_for(1LL * B * T * H * (dh / 2)), kThreads, 0, stream>>>(x, B, T, H, dh, position0, theta,
                                                                                 half_split);
    CUDA_CHECK_LAUNCH();
}

void split_heads(const float* x, float* heads, int B, int T, int H, int dh, cudaStream_t stream) {
    split_heads_kernel<<<blocks_for(1LL * B * T * H * dh), kThreads, 0, stream>>>(x, heads, B, T, H, dh);
    CUDA_CHECK_LAUNCH();
}

void merge_heads(const float* heads, float* x, int B, int T, int H, int dh, cudaStream_t stream) {
    merge_heads_kernel<<<blocks_for(1LL * B * T * H * dh), kThreads, 0, stream>>>(heads, x, B, T, H, dh);
    CUDA_CHECK_LAUNCH();
}

void append_to_cache(const float* fresh, float* cache, int B, int T, int Hkv, int dh, int capacity,
                     long long position0, cudaStream_t stream) {
    append_to_cache_kernel<<<blocks_for(1LL * B * T * Hkv * dh), kThreads, 0, stream>>>(fresh, cache, B, T, Hkv, dh,
                                                                                        capacity, position0);
    CUDA_CHECK_LAUNCH();
}

void silu_multiply(const float* gate, const float* up, float* hidden, long long n, cudaStream_t stream) {
    silu_multiply_kernel<<<blocks_for(n), kThreads, 0, stream>>>(gate, up, hidden, n);
    CUDA_CHECK_LAUNCH();
}

void residual_add(float* x, const float* update, long long n, cudaStream_t stream) {
    residual_add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, update, n);
    CUDA_CHECK_LAUNCH();
}

void float_to_bf16(const float* in, __nv_bfloat16* out, long long n, cudaStream_t stream) {
    float_to_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, n);
    CUDA_CHECK_LAUNCH();
}

void bf16_to_float(const __nv_bfloat16* in, float* out, long long n, cudaStream_t stream) {
    bf16_to_float_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace anatomy::gpu
