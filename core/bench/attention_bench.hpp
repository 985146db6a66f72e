// The CPU attention benchmark shared by `attn bench cpu` (native) and
// benchCpu() (wasm), on the one check-and-time harness (harness.hpp, ggml's
// test-backend-ops): each kernel is first checked against the reference on
// sampled rows (attention_check.hpp) and then timed on the steady clock.
//
// Cases, all causal, batch B, Hq query heads sharing Hkv KV heads, head size dh:
//   prefill    T new tokens, no history (S = T)
//   decode     one new token over a cache of S keys (T = 1)
//   recompute  what decode costs without a cache: attention for all S queries
//              of the prefix (T = S), from which the new token's row is taken
//              (with every decode case unless "recompute": false)
//   model      forward passes of the tiny demo model (tokens per second)
//   ceiling    the build's arithmetic ceiling: multiply-adds on register-resident
//              vectors (multiply_add_rounds), timed before the first case and after
//              the last, in GFLOP/s of the fastest run (the first row of the report);
//              every timed attention row also has "gflops" (of its median),
//              counting only the cells a query may see
// Kernels: grouped (v2), streaming (v3), rows (v1) and the reference with
// repeated K/V (v0), see core/ops/attention_kernels.hpp.
//
// Timing (harness.hpp: time_calls): `warmup` untimed calls, then timed calls
// until `max_runs` are done or, once `min_runs` are done, they have taken
// `budget_ms`; the statistic is the median. A kernel that fails validation is
// not timed (validate_then_time; its row says why).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace anatomy {

struct BenchOptions {
    std::size_t batch = 1;
    std::size_t heads = 32;     // Hq   (TinyLlama-1.1B's attention shape)
    std::size_t kv_heads = 4;   // Hkv
    std::size_t head_dim = 64;  // dh
    std::vector<std::size_t> prefill_T = {128, 512, 2048, 4096};
    std::vector<std::size_t> decode_S = {512, 4096};
    std::vector<std::string> kernels = {"grouped", "streaming", "rows", "steps", "reference"};
    int warmup = 1;
    int min_runs = 3;
    int max_runs = 9;
    double budget_ms = 3000;
    // The reference materialises 3 x [B, Hq, T, S] floats and runs at ~1 GFLOP/s;
    // above this T (or S for recompute) it is not run.
    std::size_t reference_max_T = 1024;
    bool model = true;          // time the tiny model's forward passes
    bool recompute = true;      // each decode_S also as the recompute case (attention over all S queries)
    std::size_t ceiling_rounds = 1 << 22;  // multiply_add_rounds per ceiling run (about 10 ms natively)
    std::uint64_t seed = 1;
};

// The small sizes `--quick` runs (odd T and S, GQA group 2, every kernel): seconds.
BenchOptions quick_bench_options();

// Options from JSON (keys as in BenchOptions, plus "quick": true to start from
// quick_bench_options()); throws InputError naming an unknown key or bad value.
BenchOptions bench_options_from_json(const nlohmann::json& options);

// Runs every case and returns the report: {"bench", "build", "kernel_isa",
// "threads", "shape", "policy", "tolerance", "rows": [...]}. Each row has
// "case", "kernel", "T", "S" and either "ms" (median), "runs_ms", "validation"
// or "skipped" (why it was not timed). `progress` receives one line per row.
nlohmann::json run_attention_bench(const BenchOptions& options,
                                   const std::function<void(const std::string&)>& progress = {});

// True when no row failed validation.
bool bench_all_validated(const nlohmann::json& report);

}  // namespace anatomy
