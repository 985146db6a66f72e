// The benchmarks' helper kernels (bench_kernels.hpp).
#include "cuda/bench_kernels.hpp"

#include "cuda/cuda_check.hpp"

namespace anatomy::gpu {
namespace {

// SplitMix64's finaliser: a well-mixed 64-bit hash of i.
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__global__ void fill_uniform_bf16_kernel(__nv_bfloat16* x, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const std::uint64_t bits = mix64(seed * 0x9e3779b97f4a7c15ull + i);
        const float unit = float(bits >> 40) * (1.0f / 16777216.0f);  // 24 bits: [0, 1)
        x[i] = __float2bfloat16_rn(2.0f * unit - 1.0f);
    }
}

__global__ void read_through_kernel(const uint4* words, std::size_t n, unsigned* sink) {
    unsigned folded = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const uint4 w = __ldcg(words + i);  // through L2, not kept in L1
        folded ^= w.x ^ w.y ^ w.z ^ w.w;
    }
    if (folded == 0x9e3779b9u) *sink = folded;  // rarely true and harmless; the compiler cannot know the loads
}

}  // namespace

void fill_uniform_bf16(__nv_bfloat16* x, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
    if (n == 0) return;
    fill_uniform_bf16_kernel<<<1024, 256, 0, stream>>>(x, n, seed);
    CUDA_CHECK_LAUNCH();
}

void read_through(const void* buffer, std::size_t bytes, unsigned* sink, cudaStream_t stream) {
    if (bytes % 16 != 0) throw CudaError("read_through: bytes must be a multiple of 16");
    read_through_kernel<<<2048, 256, 0, stream>>>(static_cast<const uint4*>(buffer), bytes / 16, sink);
    CUDA_CHECK_LAUNCH();
}

}  // namespace anatomy::gpu
