// attn verify --device cuda[:N]. Every GPU result is compared with an fp64 run of
// the core on the same weights and tokens, next to the CPU fp32 core's error:
//   |gpu - fp64| <= 2 |cpu fp32 - fp64| + 4 ulp(fp32) x max|fp64|
// (FlashAttention's rule: the GPU may be at most twice as far from the exact
// answer as a same-precision CPU run; the floor keeps a lucky CPU run that lands
// on the fp64 value from demanding the impossible). Then every attention kernel
// version on its own (gpu_kernel_checks.hpp).
#include "cuda/gpu_verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <xtensor/xview.hpp>

#include "build_info.hpp"
#include "cuda/attention_kernels.hpp"
#include "cuda/gpu_backend.hpp"
#include "cuda/gpu_forward.hpp"
#include "cuda/gpu_kernel_checks.hpp"
#include "cuda/gpu_runtime.hpp"
#include "model/cache_payload.hpp"
#include "verify/check_suite.hpp"
#include "verify/checks.hpp"
#include "verify/compare.hpp"
#include "verify/trace.hpp"
#include "verify_table.hpp"

namespace anatomy::native {
namespace {

using gpu::GpuAttention;

// The fp32 floor: 4 ulp of the largest reference value.
double fp32_floor(double largest) { return 4 * std::ldexp(1.0, -23) * largest; }

CheckRecord gpu_record(std::string id, std::string name, std::string compares, double gpu_error, double cpu_error,
                       double largest) {
    char cpu[32];
    std::snprintf(cpu, sizeof cpu, "%.1e", cpu_error);
    return make_check(std::move(id), std::move(name), std::move(compares) + " vs fp64 core (CPU fp32 error " + cpu + ")",
                      gpu_error, 2 * cpu_error + fp32_floor(largest));
}

// Columns [begin, end) of the token matrix.
TokenIds token_columns(const TokenIds& tokens, std::size_t begin, std::size_t end) {
    return xt::view(tokens, xt::all(), xt::range(begin, end));
}

// Logits of the whole sequence fed in chunks of the given sizes (cycled), on the CPU.
template <typename Real>
Tensor3<Real> cpu_in_chunks(const Model<Real>& model, const TokenIds& tokens, const std::vector<std::size_t>& sizes) {
    KVCache<Real> cache = empty_cache<Real>(model.config, tokens.shape(0));
    const std::size_t B = tokens.shape(0), T = tokens.shape(1), V = std::size_t(model.config.vocab_size);
    Tensor3<Real> logits({B, T, V});
    for (std::size_t begin = 0, i = 0; begin < T; ++i) {
        const std::size_t end = std::min(T, begin + sizes[i % sizes.size()]);
        xt::view(logits, xt::all(), xt::range(begin, end)) = forward(model, cache, token_columns(tokens, begin, end));
        begin = end;
    }
    return logits;
}

// The same on the GPU, through the GPU cache.
Tensor3<float> gpu_in_chunks(const gpu::GpuRuntime& g, const gpu::GpuModel& model, const TokenIds& tokens,
                             const std::vector<std::size_t>& sizes, GpuAttention kernel) {
    const std::size_t B = tokens.shape(0), T = tokens.shape(1), V = std::size_t(model.config.vocab_size);
    gpu::GpuKVCache cache = gpu::make_gpu_cache(model.config, int(B), int(T));
    Tensor3<float> logits({B, T, V});
    for (std::size_t begin = 0, i = 0; begin < T; ++i) {
        const std::size_t end = std::min(T, begin + sizes[i % sizes.size()]);
        xt::view(logits, xt::all(), xt::range(begin, end)) =
            gpu::gpu_forward(g, model, cache, token_columns(tokens, begin, end), kernel);
        begin = end;
    }
    return logits;
}

std::vector<CheckRecord> model_checks(const gpu::GpuRuntime& g, const gpu::GpuModel& gpu_model, const Model<float>& model,
                                      const TokenIds& tokens) {
    const Model<double> exact = cast_model<double>(model);
    ForwardCapture<double> exact_capture;
    const Tensor3<double> exact_logits = full_forward(exact, tokens, AttentionPath::grouped, &exact_capture);
    ForwardCapture<float> cpu_capture;
    const Tensor3<float> cpu_logits = full_forward(model, tokens, AttentionPath::grouped, &cpu_capture);
    const double largest_logit = max_abs(exact_logits);
    const double cpu_logit_error = max_abs_diff(cpu_logits, exact_logits);

    const int B = int(tokens.shape(0)), T = int(tokens.shape(1));
    std::vector<CheckRecord> records;

    // g1, g2: eager, one full pass, logits and every probability.
    std::vector<Tensor4<float>> gpu_probs;
    gpu::GpuKVCache cache = gpu::make_gpu_cache(model.config, B, T);
    const Tensor3<float> eager_logits = gpu::gpu_forward(g, gpu_model, cache, tokens, GpuAttention::eager, &gpu_probs);
    records.push_back(gpu_record("g1", "gpu_eager_logits", "GPU eager attention, full pass: logits",
                                 max_abs_diff(eager_logits, exact_logits), cpu_logit_error, largest_logit));
    double gpu_prob_error = 0, cpu_prob_error = 0, largest_prob = 0;
    for (std::size_t l = 0; l < gpu_probs.size(); ++l) {
        gpu_prob_error = std::max(gpu_prob_error, max_abs_diff(gpu_probs[l], exact_capture.layers[l].probs));
        cpu_prob_error = std::max(cpu_prob_error, max_abs_diff(cpu_capture.layers[l].probs, exact_capture.layers[l].probs));
        largest_prob = std::max(largest_prob, max_abs(exact_capture.layers[l].probs));
    }
    records.push_back(gpu_record("g2", "gpu_eager_probabilities", "GPU eager attention: every layer's probabilities",
                                 gpu_prob_error, cpu_prob_error, largest_prob));

    // g3: flash, one full pass (when the head dim is compiled); g4: flash chunked through the cache.
    const bool flash = gpu::flash_plain_supports(model.config.head_dim);
    const GpuAttention prefill_kernel = flash ? GpuAttention::flash : GpuAttention::eager;
    if (flash) {
        gpu::GpuKVCache flash_cache = gpu::make_gpu_cache(model.config, B, T);
        const Tensor3<float> flash_logits = gpu::gpu_forward(g, gpu_model, flash_cache, tokens, GpuAttention::flash);
        records.push_back(gpu_record("g3", "gpu_flash_logits", "GPU flash attention (fp32), full pass: logits",
                                     max_abs_diff(flash_logits, exact_logits), cpu_logit_error, largest_logit));
    }
    const std::vector<std::size_t> chunks = {2, 3, 1};
    const Tensor3<float> gpu_chunked = gpu_in_chunks(g, gpu_model, tokens, chunks, prefill_kernel);
    const Tensor3<float> cpu_chunked = cpu_in_chunks(model, tokens, chunks);
    records.push_back(gpu_record("g4", "gpu_chunked_prefill", std::string("GPU ") + gpu::to_string(prefill_kernel) +
                                     " prefill in chunks of 2 + 3 + 1 through the GPU cache: logits",
                                 max_abs_diff(gpu_chunked, exact_logits), max_abs_diff(cpu_chunked, exact_logits),
                                 largest_logit));

    // g5, g6: decode, one token at a time through the GPU cache, with each decode kernel.
    const Tensor3<float> cpu_decoded = cpu_in_chunks(model, tokens, {1});
    const Tensor3<float> split_decoded = gpu_in_chunks(g, gpu_model, tokens, {1}, GpuAttention::decode_split);
    records.push_back(gpu_record("g5", "gpu_decode_matches_full",
                                 "GPU split-K decode (v1), one token at a time through the GPU cache: logits",
                                 max_abs_diff(split_decoded, exact_logits), max_abs_diff(cpu_decoded, exact_logits),
                                 largest_logit));
    if (gpu::decode_kernel_for(model.config) == GpuAttention::decode_group) {
        const Tensor3<float> group_decoded = gpu_in_chunks(g, gpu_model, tokens, {1}, GpuAttention::decode_group);
        records.push_back(gpu_record("g6", "gpu_group_decode_matches_full",
                                     "GPU group decode (v2), one token at a time through the GPU cache: logits",
                                     max_abs_diff(group_decoded, exact_logits), max_abs_diff(cpu_decoded, exact_logits),
                                     largest_logit));
    }
    return records;
}

// The core's check suite (verify/check_suite.hpp) on the GPU forward as a Backend
// (gpu_backend.hpp; full passes run eager attention, which keeps the probabilities).
// Their ids are the core's with "gpu-" in front. Not run here: a and b (g5 and g4
// above hold decode and chunked prefill to the fp64 core instead), c (the GPU
// kernels only index shared KV heads, there is no repeated-K/V path to compare), f1
// and h1 (properties of the config and of RoPE's formula, not of an implementation).
std::vector<CheckRecord> core_checks_on_gpu(const gpu::GpuRuntime& g, const gpu::GpuModel& gpu_model,
                                            const Model<float>& model, const TokenIds& tokens) {
    // g. cuBLAS may choose another algorithm for another number of rows, so a sequence
    // in a batch and alone may each carry its own fp32 rounding: both within the
    // 2 x CPU rule of the fp64 core, so within twice that of each other.
    const TokenIds batch = batch_of_two_or_more(tokens, model.config.vocab_size);
    const Tensor3<double> exact = full_forward(cast_model<double>(model), batch, AttentionPath::grouped);
    const double cpu_error = max_abs_diff(full_forward(model, batch, AttentionPath::grouped), exact);
    SuiteOptions options;
    options.id_prefix = "gpu-";
    options.name_prefix = "gpu_";
    options.what = "GPU eager: ";
    options.cache_checks = false;  // g4 and g5 hold chunked prefill and decode to the fp64 core
    options.batch_tolerance = 2 * (2 * cpu_error + fp32_floor(max_abs(exact)));
    gpu::GpuBackend backend(g, gpu_model, int(tokens.shape(1)));
    return run_check_suite(backend, tokens, options);
}

}  // namespace

void require_gpu_device(int index) {
    const int count = gpu::cuda_device_count();
    if (count == 0) throw InputError("--device cuda:" + std::to_string(index) + ": no CUDA device on this machine");
    if (index >= count)
        throw InputError("--device cuda:" + std::to_string(index) + ": this machine has " + std::to_string(count) +
                         " CUDA device(s)");
}

int run_verify_on_gpu(const Model<float>& model, const TokenIds& tokens, const GpuVerifyRequest& request) {
    require_gpu_device(request.device);
    const gpu::GpuRuntime g(request.device);
    const BuildInfo build = build_info();
    std::cout << "attn verify: " << request.header << ", " << build.platform << " build with CUDA, " << build.compiler
              << "\non cuda:" << request.device << ": " << gpu::gpu_info_line(g.info()) << "\n\n";

    const gpu::GpuModel gpu_model = gpu::upload_model(model);
    std::vector<CheckRecord> checks = model_checks(g, gpu_model, model, tokens);
    for (CheckRecord& r : core_checks_on_gpu(g, gpu_model, model, tokens)) checks.push_back(std::move(r));
    for (CheckRecord& r : gpu::run_kernel_checks(g, {})) checks.push_back(std::move(r));
    print_check_table(std::cout, checks);

    if (request.trace) {
        nlohmann::json trace = make_trace(model, request.weights, tokens, checks, build);
        trace["device"] = gpu::gpu_info_to_json(g.info());
        *request.trace << trace.dump() << "\n";
    }
    return all_passed(checks) ? 0 : 1;
}

}  // namespace anatomy::native
