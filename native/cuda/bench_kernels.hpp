// Two kernels the GPU benchmarks need around the kernels they time.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace anatomy::gpu {

// x[i] = a value uniform in [-1, 1) from a hash of (seed, i), rounded to bf16.
// Random, not constant: zeros and repeated values make tensor cores and memory
// systems look faster than they are on real data.
void fill_uniform_bf16(__nv_bfloat16* x, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// Reads every 16 bytes of `buffer` (bytes a multiple of 16), so that what was in
// the L2 cache is evicted; a read leaves no dirty lines behind, where a memset
// would leave the cache full of lines still to be written back inside the next
// timed call. `sink` (one scratch word) is written when a thread's XOR of what it
// read equals a constant: rare, harmless, and what keeps the loads from being
// optimised away.
void read_through(const void* buffer, std::size_t bytes, unsigned* sink, cudaStream_t stream);

}  // namespace anatomy::gpu
