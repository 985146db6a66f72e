// The CPU attention benchmark in the wasm build: the same harness, kernels and
// validation as `attn bench cpu` (core/bench/attention_bench.hpp), compiled with
// -O3 -msimd128 into a module of its own (attention_bench.js/.wasm). Run from Node by
// tools/bench-wasm.mjs and tests/wasm/bench_cpu.test.mjs, and in the notebook's cost
// figure without a GPU, in a worker (web/src/widgets/gpu-cost/cpu-bench-worker.ts).
//
//   benchCpu(optionsJson)  options: the keys of BenchOptions ({"quick": true},
//       {"prefill_T": [128, 512], "decode_S": [512], "kernels": [...]}, ...)
//       -> the report as JSON text (rows with "ms" and "validation"), or {"error"}
#include <emscripten/bind.h>

#include "bench/attention_bench.hpp"
#include "json_args.hpp"
#include "json_input.hpp"

namespace anatomy::wasm {
namespace {

std::string bench_cpu_json(const std::string& options_json) {
    return json_or_error([&] {
        const json options = parse_json(options_json.empty() ? "{}" : options_json, "the bench options");
        return run_attention_bench(bench_options_from_json(options));
    });
}

}  // namespace

EMSCRIPTEN_BINDINGS(anatomy_bench) {
    emscripten::function("benchCpu", &bench_cpu_json);
}

}  // namespace anatomy::wasm
