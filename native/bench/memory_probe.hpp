// Peak memory of one attention call, for `attn bench memory`: each measurement
// runs in a fresh child process (fork), which makes its inputs, reads its peak
// resident set (getrusage ru_maxrss), runs the kernel once and reads it again.
// The difference is what the call itself added at its peak: output, scratch and,
// for the reference, the [B, Hq, T, S] scores, masked scores and probabilities.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace anatomy::native {

struct MemoryOptions {
    std::size_t batch = 1, heads = 32, kv_heads = 4, head_dim = 64;
    // (kernel, T) pairs, causal prefill with S = T; kernels: streaming, grouped, reference.
    std::vector<std::pair<std::string, std::size_t>> runs;
};

// -> {"bench": "attention-memory", "shape", "rows": [{"kernel", "T", "peak_mb",
//     "output_mb", "scores_mb", "ms"} or {..., "failed": why}]}
nlohmann::json run_memory_bench(const MemoryOptions& options);

}  // namespace anatomy::native
