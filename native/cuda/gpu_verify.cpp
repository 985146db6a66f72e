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
#include "cache_payload.hpp"
#include "checks.hpp"
#include "cuda/attention_kernels.hpp"
#include "cuda/gpu_forward.hpp"
#include "cuda/gpu_kernel_checks.hpp"
#include "cuda/gpu_runtime.hpp"
#include "trace.hpp"
#include "verify_table.hpp"

namespace anatomy::native {
namespace {

using gpu::GpuAttention;

template <typename A, typename B>
double max_abs_diff(const A& a, const B& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0;
    auto ib = b.begin();
    for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
        const double d = std::abs(double(*ia) - double(*ib));
        if (std::isnan(d)) return INFINITY;
        worst = std::max(worst, d);
    }
    return worst;
}

template <typename A>
double max_abs(const A& a) {
    double m = 0;
    for (auto x : a) m = std::max(m, std::abs(double(x)));
    return m;
}

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

// The core's checks that hold for any implementation (checks.hpp), repeated on
// the GPU forward with eager attention (it keeps the probabilities). Their ids
// are the core's with "gpu-" in front. Not repeated: a and b (g5 and g4 above
// hold decode and chunked prefill to the fp64 core instead), c (the GPU kernels
// only index shared KV heads, there is no repeated-K/V path to compare), f1 and
// h1 (properties of the config and of RoPE's formula, not of an implementation).
std::vector<CheckRecord> core_checks_on_gpu(const gpu::GpuRuntime& g, const gpu::GpuModel& gpu_model,
                                            const Model<float>& model, const TokenIds& tokens) {
    const ModelConfig& c = model.config;
    const std::size_t T = tokens.shape(1);
    // A full pass from an empty cache: tokens [B, T] -> logits [B, T, V], probabilities per layer [B, Hq, T, T].
    auto full_pass = [&](const TokenIds& ids, std::vector<Tensor4<float>>* probs, gpu::GpuKVCache* kept = nullptr) {
        gpu::GpuKVCache cache = gpu::make_gpu_cache(c, int(ids.shape(0)), int(ids.shape(1)));
        Tensor3<float> logits = gpu::gpu_forward(g, gpu_model, cache, ids, GpuAttention::eager, probs);
        if (kept) *kept = std::move(cache);
        return logits;
    };
    std::vector<Tensor4<float>> probs;
    gpu::GpuKVCache filled;
    const Tensor3<float> full = full_pass(tokens, &probs, &filled);
    std::vector<CheckRecord> records;

    // d. Replace every token after position t: nothing at positions <= t may change, bit for bit
    // (the same shapes run the same cuBLAS and kernel launches; masked keys add exact zeros).
    double leak = 0;
    for (std::size_t t = 0; t + 1 < T; ++t) {
        const TokenIds changed = tokens_changed_after(tokens, t, c.vocab_size);
        std::vector<Tensor4<float>> other_probs;
        const Tensor3<float> other = full_pass(changed, &other_probs);
        auto upto = xt::range(std::size_t(0), t + 1);
        leak = std::max(leak, max_abs_diff(xt::view(full, xt::all(), upto), xt::view(other, xt::all(), upto)));
        for (std::size_t l = 0; l < probs.size(); ++l)
            leak = std::max(leak, max_abs_diff(xt::view(probs[l], xt::all(), xt::all(), upto),
                                               xt::view(other_probs[l], xt::all(), xt::all(), upto)));
    }
    records.push_back(make_check("gpu-d", "gpu_future_tokens_do_not_leak",
                                 "GPU eager: logits and probabilities at positions <= t, before vs after changing "
                                 "all tokens after t (bit for bit)",
                                 leak, 0.0));

    // e1-e3 and h2: the core's own checks on the GPU's probabilities.
    std::vector<CheckRecord> on_probs = check_probabilities(probs);
    on_probs.push_back(check_shared_heads_differ(c, probs));
    for (CheckRecord& r : on_probs) {
        r.id = "gpu-" + r.id;
        r.name = "gpu_" + r.name;
        r.compares = "GPU eager: " + r.compares;
        records.push_back(std::move(r));
    }

    // f2. What the GPU cache holds after the pass vs 2 x L x Hkv x dh x tokens x batch floats.
    std::size_t stored = 0;
    for (int l = 0; l < c.n_layers; ++l) stored += filled.keys[l].size() + filled.values[l].size();
    const double expected = double(cache_bytes(c, 4, std::int64_t(T), std::int64_t(tokens.shape(0))));
    records.push_back(make_check("gpu-f2", "gpu_payload_matches_cache",
                                 "bytes of the GPU KV cache filled by the pass vs 2 x L x Hkv x dh x tokens x batch x 4",
                                 std::abs(double(stored * sizeof(float)) - expected), 0.0));

    // g. Each sequence of a batch vs the same sequence alone. cuBLAS may choose another
    // algorithm for another number of rows, so each result may carry its own fp32
    // rounding: both within the 2 x CPU rule of the fp64 core, so within twice that of each other.
    const TokenIds batch = batch_of_two_or_more(tokens, c.vocab_size);
    const Tensor3<double> exact = full_forward(cast_model<double>(model), batch, AttentionPath::grouped);
    const double cpu_error = max_abs_diff(full_forward(model, batch, AttentionPath::grouped), exact);
    std::vector<Tensor4<float>> together_probs;
    const Tensor3<float> together = full_pass(batch, &together_probs);
    double apart = 0;
    for (std::size_t b = 0; b < batch.shape(0); ++b) {
        std::vector<Tensor4<float>> alone_probs;
        const TokenIds row = xt::view(batch, xt::range(b, b + 1), xt::all());
        const Tensor3<float> alone = full_pass(row, &alone_probs);
        apart = std::max(apart, max_abs_diff(xt::view(together, xt::range(b, b + 1)), alone));
        for (std::size_t l = 0; l < alone_probs.size(); ++l)
            apart = std::max(apart, max_abs_diff(xt::view(together_probs[l], xt::range(b, b + 1)), alone_probs[l]));
    }
    records.push_back(make_check("gpu-g", "gpu_batch_matches_single",
                                 "GPU eager: each of " + std::to_string(batch.shape(0)) +
                                     " different sequences in one batch vs run alone (logits, probabilities)",
                                 apart, 2 * (2 * cpu_error + fp32_floor(max_abs(exact)))));
    return records;
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
