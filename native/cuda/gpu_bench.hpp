// attn bench attention | decode --device cuda[:N]. Plain C++ interface:
// gpu_bench.cpp in the cuda build, gpu_bench_none.cpp otherwise (refuses).
//
// Method (docs/gpu.md, "The benchmarks"), the one check-and-time harness
// (core/bench/harness.hpp): every kernel is first checked against the core on a
// small shape of the same heads and head dim (gpu_kernel_checks.hpp), and only a
// kernel that passed is timed: CUDA events (cuda_event_timer.hpp), 3 warm-up
// calls, the L2 cache evicted (a read of 2 x L2) before every timed call, at
// least 5 timed calls, then no more once 2 s is spent, at most max_runs; the median.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace anatomy::native {

struct GpuAttentionBenchOptions {
    int device = 0;
    std::vector<int> T = {1024, 2048, 4096, 8192, 16384};
    std::vector<int> D = {64, 128};
    std::vector<int> Hkv = {32, 4};  // with H = 32 query heads
    int tokens_per_batch = 16384;    // B = max(1, tokens_per_batch / T)
    int max_runs = 20;
    int plain_max_T = 4096;          // flash_plain is slow: time it up to this T
    double eager_max_gib = 60;       // skip eager when scores + probabilities would exceed this
    bool peers = true;               // torch SDPA through python3
    std::string python = "python3";
    std::string peers_script;        // native/bench/gpu_peers.py
};

struct GpuDecodeBenchOptions {
    int device = 0;
    std::vector<int> S = {4096, 8192, 16384, 32768, 65536};
    std::vector<int> Hkv = {32, 4};  // with H = 32 query heads, D = 128, B = 1, bf16
    int max_runs = 50;
};

// Each returns the JSON report; throws InputError when there is no CUDA device.
nlohmann::json run_gpu_attention_bench(const GpuAttentionBenchOptions& options);
nlohmann::json run_gpu_decode_bench(const GpuDecodeBenchOptions& options);
void print_gpu_attention_table(std::ostream& out, const nlohmann::json& report);
void print_gpu_decode_table(std::ostream& out, const nlohmann::json& report);
// True when every kernel passed its check before timing.
bool gpu_bench_validated(const nlohmann::json& report);

}  // namespace anatomy::native
