// Every GPU attention kernel checked against the core, before anything is timed.
//
// Tolerance: the harness's one rule (core/bench/harness.hpp), with a CPU run in
// the kernel's precision as the same-precision implementation and the GPU's
// floor, one rounding of the output:
//   |gpu - fp64| <= 2 |cpu - fp64| + u * max|fp64|,   u = 2^-23 x 4 (fp32), 2^-8 (bf16)
// The CPU run rounds where the kernel rounds (bf16 inputs, fp32 sums, P rounded
// to bf16 before P @ V when the kernel does that, the output rounded to bf16).
// The floor keeps a lucky CPU run (error near 0) from demanding the impossible.
// The mask of every case comes from core/masks.hpp (mask_allows), so the GPU's
// predicates are checked against the core's definition too.
#pragma once

#include <string>
#include <vector>

#include "cuda/attention_kernels.hpp"
#include "cuda/attention_mask_spec.hpp"
#include "cuda/gpu_runtime.hpp"
#include "masks.hpp"
#include "verify/checks.hpp"

namespace anatomy::gpu {

enum class KernelVersion {
    eager_fp32, eager_bf16, flash_plain_fp32, flash_plain_bf16, flash_mma_bf16, flash_mma2_bf16,
    decode_split_fp32, decode_split_bf16, decode_group_fp32, decode_group_bf16
};
const char* to_string(KernelVersion version);
bool is_bf16(KernelVersion version);

struct KernelCheckOptions {
    bool quick = false;  // fewer shapes (what the tests run)
};

// One record per kernel version and head dim: the worst case (largest error
// over tolerance) over masks, GQA and cache offsets.
std::vector<CheckRecord> run_kernel_checks(const GpuRuntime& gpu, const KernelCheckOptions& options);

// Random inputs for `shape`: q [B, Hq, T, D] and k, v [B, Hkv, capacity, D], N(0, 1)
// from SplitMix64(seed) (q first, then k and v alternately), rounded to bfloat16
// when asked; k and v rows S .. capacity - 1 hold NaN, so a read past S shows.
struct AttentionInputs {
    std::vector<float> q, k, v;
};
AttentionInputs random_attention_inputs(const AttentionShape& shape, bool bf16_inputs, std::uint64_t seed);

// Checks one version on one shape and mask (used by the benchmark before timing).
CheckRecord check_kernel_case(const GpuRuntime& gpu, KernelVersion version, const AttentionShape& shape,
                              const MaskSpec& spec, const std::string& id);

}  // namespace anatomy::gpu
