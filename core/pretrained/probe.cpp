#include "probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "../build_info.hpp"
#include "../model/cache_payload.hpp"
#include "../lessons/head_patterns.hpp"
#include "../nested_json.hpp"
#include "../verify/check_suite.hpp"
#include "../verify/checks.hpp"
#include "../verify/compare.hpp"
#include "../verify/trace.hpp"

namespace anatomy {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Index of the largest entry of row [V] (the first one on a tie).
std::int32_t argmax(const float* row, std::size_t V) {
    return std::int32_t(std::max_element(row, row + V) - row);
}

nlohmann::json per_second(double count, double seconds) {
    return count > 0 && seconds > 0 ? nlohmann::json(count / seconds) : nlohmann::json(nullptr);
}

TokenIds one_row(const std::vector<std::int32_t>& ids) {
    TokenIds tokens({1, ids.size()});
    std::copy(ids.begin(), ids.end(), tokens.begin());
    return tokens;
}

}  // namespace

std::vector<std::int32_t> prompt_ids(const LlamaTokenizer& tokenizer, std::string_view text, bool chat,
                                     std::int32_t bos_id, std::int32_t eos_id) {
    std::vector<std::int32_t> ids = {bos_id};
    auto add = [&](std::string_view segment) {
        const std::vector<std::int32_t> part = tokenizer.encode(segment, false);
        ids.insert(ids.end(), part.begin(), part.end());
    };
    if (!chat) {
        add(text);
        return ids;
    }
    add("<|user|>\n" + std::string(text));
    ids.push_back(eos_id);
    add("\n<|assistant|>\n");
    return ids;
}

std::string token_text(const LlamaTokenizer& tokenizer, std::int32_t id) {
    if (id < 0 || std::size_t(id) >= tokenizer.vocab_size()) return "<id " + std::to_string(id) + ">";
    return tokenizer.display(id);
}

std::vector<TokenChoice> top_next_tokens(const float* logits, std::size_t V, std::size_t k) {
    const float top_logit = *std::max_element(logits, logits + V);
    std::vector<double> probs(V);
    double total = 0;
    for (std::size_t v = 0; v < V; ++v) total += probs[v] = std::exp(double(logits[v]) - double(top_logit));
    std::vector<std::int32_t> order(V);
    for (std::size_t v = 0; v < V; ++v) order[v] = std::int32_t(v);
    k = std::min(k, V);
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(k), order.end(),
                      [&](std::int32_t a, std::int32_t b) { return probs[a] > probs[b] || (probs[a] == probs[b] && a < b); });
    std::vector<TokenChoice> top;
    for (std::size_t i = 0; i < k; ++i) top.push_back({order[i], probs[order[i]] / total, logits[order[i]]});
    return top;
}

nlohmann::json run_probe(const PretrainedModel& model, const LlamaTokenizer& tokenizer, const ProbeRequest& request) {
    PretrainedBackend backend(model, request.cache_dtype);
    return run_probe(model, tokenizer, request, backend);
}

nlohmann::json run_probe(const PretrainedModel& model, const LlamaTokenizer& tokenizer, const ProbeRequest& request,
                         Backend& backend) {
    const ModelConfig& c = model.config;
    const std::size_t T = request.ids.size(), V = std::size_t(c.vocab_size);
    const std::size_t L = std::size_t(c.n_layers), H = std::size_t(c.n_heads);
    if (T == 0) throw InputError("the prompt has no tokens");
    if (T > max_probe_tokens)
        throw InputError("the prompt has " + std::to_string(T) + " tokens; the probe takes at most " + std::to_string(max_probe_tokens));
    if (request.generate < 0) throw InputError("the continuation length must not be negative");
    const TokenIds tokens = one_row(request.ids);  // [1, T]

    // 1. The full pass: T tokens at once, every layer's attention captured.
    backend.reset(1);
    PassCapture capture;
    Clock::time_point start = Clock::now();
    const Tensor3<float> full = backend.forward(tokens, &capture);  // [1, T, V]
    const double prefill_seconds = seconds_since(start);

    // 2. The same prompt one token at a time through an emptied cache.
    backend.reset(1);
    Tensor3<float> cached({1, T, V});
    start = Clock::now();
    for (std::size_t t = 0; t < T; ++t) {
        const Tensor3<float> step = backend.forward(one_row({request.ids[t]}), nullptr);  // [1, 1, V]
        std::copy(step.begin(), step.end(), cached.data() + t * V);
    }
    const double cached_prefill_seconds = seconds_since(start);

    const double max_diff = max_abs_diff(full, cached), max_logit = max_abs(full);
    std::vector<std::int32_t> argmax_full(T), argmax_cached(T);
    std::vector<bool> agrees(T);
    std::size_t disagreements = 0;
    for (std::size_t t = 0; t < T; ++t) {
        argmax_full[t] = argmax(full.data() + t * V, V);
        argmax_cached[t] = argmax(cached.data() + t * V, V);
        agrees[t] = argmax_full[t] == argmax_cached[t];
        disagreements += agrees[t] ? 0 : 1;
    }

    // 3. Attention sinks and the probability checks, from the full pass: the
    //    first-token score (lessons/head_patterns.hpp) of every layer and head,
    //    sink[l][h] = mean over queries t in [T/2, T) of probs[0, h, t, 0].
    const std::vector<Tensor4<float>> full_probs = captured_probs(capture);  // [L] x [1, Hq, T, T]
    nlohmann::json layers = nlohmann::json::array();
    for (const Tensor4<float>& p : full_probs) layers.push_back({{"probabilities", to_nested_json(p)}});
    const PatternScores sinks = first_token_scores(full_probs);
    const std::size_t first_query = T / 2;
    const double uniform = sinks.uniform_baseline;  // what position 0 would get if every query spread its attention evenly
    nlohmann::json sink_stats = nlohmann::json::array(), layer_mean = nlohmann::json::array();
    for (const std::vector<double>& heads : sinks.heads) {
        sink_stats.push_back(heads);
        layer_mean.push_back(std::accumulate(heads.begin(), heads.end(), 0.0) / double(H));
    }

    // 4. The next token after the prompt, then a greedy continuation through the cache.
    const float* last = full.data() + (T - 1) * V;
    nlohmann::json top_next = nlohmann::json::array();
    for (const TokenChoice& choice : top_next_tokens(last, V, std::size_t(std::max(request.top_k, 0))))
        top_next.push_back({{"id", choice.id}, {"token_text", token_text(tokenizer, choice.id)},
                            {"probability", choice.probability}, {"logit", choice.logit}});

    std::vector<std::int32_t> generated;
    bool stopped = false;
    std::size_t decode_steps = 0;
    start = Clock::now();
    if (request.generate > 0) {
        std::int32_t next = argmax_cached[T - 1];
        for (int i = 0;; ++i) {
            generated.push_back(next);
            stopped = std::find(request.stop_ids.begin(), request.stop_ids.end(), next) != request.stop_ids.end();
            if (stopped || i + 1 >= request.generate) break;
            const Tensor3<float> step = backend.forward(one_row({next}), nullptr);  // [1, 1, V]
            ++decode_steps;
            next = argmax(step.data(), V);
        }
    }
    const double decode_seconds = seconds_since(start);
    nlohmann::json generated_text = nlohmann::json::array();
    std::vector<std::int32_t> decodable;
    for (std::int32_t id : generated) {
        generated_text.push_back(token_text(tokenizer, id));
        if (std::size_t(id) < tokenizer.vocab_size()) decodable.push_back(id);
    }

    // The records: p3 and p4 are the check suite's e1 and e3 on the full pass's probabilities.
    const std::vector<CheckRecord> on_probs = check_probabilities(full_probs);  // e1, e2, e3
    const double worst_row_sum = on_probs[0].max_abs_error, worst_future = on_probs[2].max_abs_error;
    const std::vector<CheckRecord> checks = {
        make_check("p1", "cached_matches_full", "logits of the prompt prefilled one token at a time through the KV cache vs one full pass",
                   max_diff, probe_logit_tolerance),
        // The most likely token of a row holding a value that is not finite is undefined.
        make_check("p2", "argmax_agrees", "positions where the cached and the full pass pick a different most likely next token",
                   std::isfinite(max_diff) ? double(disagreements) : INFINITY, 0),
        make_check("p3", "rows_sum_to_one", "sum of every attention probability row vs 1 (all layers, heads, queries)", worst_row_sum,
                   probe_row_sum_tolerance),
        make_check("p4", "future_cells_are_zero", "attention probabilities on keys after their query vs 0 (exact)", worst_future, 0),
    };
    nlohmann::json check_list = nlohmann::json::array();
    for (const CheckRecord& r : checks) check_list.push_back(check_to_json(r));

    nlohmann::json token_text_row = nlohmann::json::array();
    for (std::int32_t id : request.ids) token_text_row.push_back(token_text(tokenizer, id));
    std::vector<std::int64_t> positions(T);
    for (std::size_t t = 0; t < T; ++t) positions[t] = std::int64_t(t);

    nlohmann::json shapes = nlohmann::json::array();  // in the order the pass computes them
    for (const auto& [name, shape] : capture.shapes) shapes.push_back({{"name", name}, {"shape", shape}});
    auto matrix_shape = [](const WeightView& w) { return std::vector<std::size_t>{w.rows, w.cols}; };
    const PretrainedLayer& layer0 = model.layers.front();
    const std::size_t scalar = dtype_size(backend.cache_dtype());
    const CachePayload payload = cache_payload(c);
    const std::string cache_name = backend.cache_dtype() == DType::f32 ? "float32" : "bfloat16";

    Tensor3<float> last_logits({1, 1, V});
    std::copy(last, last + V, last_logits.begin());

    nlohmann::json trace = {
        {"schema_version", trace_schema_version},
        {"kind", "attention-anatomy-trace"},
        {"config", config_to_json(c)},
        {"tokens", to_nested_json(tokens)},
        {"token_text", nlohmann::json::array({token_text_row})},
        {"positions", positions},
        {"layers", layers},
        {"logits", to_nested_json(last_logits)},
        {"logits_positions", {T - 1}},
        {"checks", check_list},
        {"all_checks_passed", all_passed(checks)},
        {"non_finite", non_finite_json(first_non_finite(capture.layers, full))},
        {"cache_payload", payload_to_json(payload)},
        {"build", build_info_to_json(build_info())},
        {"sink_stats", sink_stats},
        {"probe",
         {{"dtype", to_string(model.precision)},
          {"precision",
           {{"weights_stored", model.stored_dtypes},
            {"weights_held", to_string(model.precision)},
            {"weight_bytes_in_place", model.bytes_in_place},
            {"weight_bytes_converted", model.bytes_converted},
            {"parameters", model.parameters},
            {"activations", "float32"},
            {"kv_cache", cache_name},
            {"note", model.precision == WeightPrecision::float32
                         ? "float32 throughout; bfloat16 or float16 weights are widened to float32 exactly, one row at a "
                           "time inside the projection loop"
                         : "weights and KV cache in bfloat16, activations, accumulation and softmax in float32 (PyTorch in "
                           "bfloat16 also rounds every activation to bfloat16, so its logits differ slightly)"}}},
          {"shapes",
           {{"weights_layout", "[out, in], as stored in the checkpoint"},
            {"embed_tokens", matrix_shape(model.embedding)},
            {"lm_head", c.tie_embeddings ? nlohmann::json("tied to embed_tokens") : nlohmann::json(matrix_shape(model.lm_head))},
            {"norm", {model.final_norm.size()}},
            {"layers", L},
            {"layer",
             {{"input_layernorm", {layer0.attn_norm.size()}},
              {"q_proj", matrix_shape(layer0.wq)},
              {"k_proj", matrix_shape(layer0.wk)},
              {"v_proj", matrix_shape(layer0.wv)},
              {"o_proj", matrix_shape(layer0.wo)},
              {"post_attention_layernorm", {layer0.ffn_norm.size()}},
              {"gate_proj", matrix_shape(layer0.w_gate)},
              {"up_proj", matrix_shape(layer0.w_up)},
              {"down_proj", matrix_shape(layer0.w_down)}}},
            {"block", shapes}}},
          {"cache",
           {{"dtype", cache_name},
            {"bytes_per_scalar", scalar},
            {"layer_tensor_shape", {1, c.n_kv_heads, backend.cached_tokens(), c.head_dim}},
            {"scalars_per_token", payload.scalars_per_token},
            {"bytes_per_token", payload.scalars_per_token * std::int64_t(scalar)},
            {"tokens", backend.cached_tokens()},
            {"total_bytes", backend.cache_bytes()},
            {"expected_total_bytes", payload.scalars_per_token * std::int64_t(scalar) * backend.cached_tokens()}}},
          {"cached_vs_full",
           {{"positions", T},
            {"max_abs_diff", max_diff},
            {"tolerance", probe_logit_tolerance},
            {"max_abs_logit", max_logit},
            {"argmax_full", argmax_full},
            {"argmax_cached", argmax_cached},
            {"argmax_agrees", agrees},
            {"all_argmax_agree", disagreements == 0}}},
          {"sinks",
           {{"queries_from", first_query},
            {"queries_to", T - 1},
            {"uniform_baseline", uniform},
            {"layer_mean", layer_mean}}},
          {"top_next", top_next},
          {"continuation",
           {{"requested", request.generate},
            {"ids", generated},
            {"token_text", generated_text},
            // Read on from the prompt: its leading space kept, unless it starts the text (after BOS), as llama2.c prints it.
            {"text", tokenizer.decode(decodable, request.ids.back() == request.bos_id)},
            {"stopped_at_eos", stopped}}},
          {"timing",
           {{"prefill_tokens", T},
            {"prefill_seconds", prefill_seconds},
            {"prefill_tokens_per_second", per_second(double(T), prefill_seconds)},
            {"cached_prefill_seconds", cached_prefill_seconds},
            {"cached_prefill_tokens_per_second", per_second(double(T), cached_prefill_seconds)},
            {"decode_steps", decode_steps},
            {"decode_seconds", decode_seconds},
            {"decode_tokens_per_second", per_second(double(decode_steps), decode_seconds)}}}}},
    };
    // 5. Optionally, what each head does (two more passes, each from an empty cache).
    if (request.head_patterns)
        trace["probe"]["head_patterns"] = head_patterns_to_json(head_patterns(backend, request.ids, request.bos_id));
    return trace;
}

}  // namespace anatomy
