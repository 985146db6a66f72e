// Small device helpers shared by the kernels: element conversion and warp
// reductions. Device code only; included by .cu files.
#pragma once

#include <cuda_bf16.h>

#include <limits>

namespace anatomy::gpu {

// +infinity, usable in host and device code (--expt-relaxed-constexpr).
inline constexpr float kInf = std::numeric_limits<float>::infinity();

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename E>
__device__ __forceinline__ E from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Every lane of the warp receives the sum / max over all 32 lanes.
__device__ __forceinline__ float warp_sum(float x) {
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
    return x;
}
__device__ __forceinline__ float warp_max(float x) {
    for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
    return x;
}

// Merge two partial softmax states (running max m, running sum l of exp(x - m)).
// A state with m = -inf has seen no visible key and contributes nothing.
struct SoftmaxState {
    float m = -kInf;
    float l = 0.0f;
};
__device__ __forceinline__ SoftmaxState merge_states(SoftmaxState a, SoftmaxState b) {
    if (a.m == -kInf) return b;
    if (b.m == -kInf) return a;
    const float m = fmaxf(a.m, b.m);
    return {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
}

}  // namespace anatomy::gpu
