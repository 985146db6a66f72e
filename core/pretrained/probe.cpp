#include "probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "../verify/check_suite.hpp"
#include "../verify/compare.hpp"

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

ProbeResult run_probe(const PretrainedModel& model, const LlamaTokenizer& tokenizer, const ProbeRequest& request) {
    PretrainedBackend backend(model, request.cache_dtype);
    return run_probe(model, tokenizer, request, backend);
}

ProbeResult run_probe(const PretrainedModel& model, const LlamaTokenizer& tokenizer, const ProbeRequest& request,
                      Backend& backend) {
    const ModelConfig& c = model.config;
    const std::size_t T = request.ids.size(), V = std::size_t(c.vocab_size);
    const std::size_t H = std::size_t(c.n_heads);
    if (T == 0) throw InputError("the prompt has no tokens");
    if (T > max_probe_tokens)
        throw InputError("the prompt has " + std::to_string(T) + " tokens; the probe takes at most " + std::to_string(max_probe_tokens));
    if (request.generate < 0) throw InputError("the continuation length must not be negative");
    const TokenIds tokens = one_row(request.ids);  // [1, T]

    ProbeResult r;
    r.config = c;
    r.ids = request.ids;
    for (std::int32_t id : request.ids) r.token_text.push_back(token_text(tokenizer, id));
    // The weights as stored, [out, in]; layer 0's stand for every layer's.
    auto matrix_shape = [](const WeightView& w) { return std::vector<std::size_t>{w.rows, w.cols}; };
    const PretrainedLayer& layer0 = model.layers.front();
    ProbeWeights& weights = r.weights;
    weights.held = model.precision;
    weights.stored_dtypes = model.stored_dtypes;
    weights.parameters = model.parameters;
    weights.bytes_in_place = model.bytes_in_place;
    weights.bytes_converted = model.bytes_converted;
    weights.embed_tokens = matrix_shape(model.embedding);
    weights.lm_head = matrix_shape(model.lm_head);
    weights.norm = {model.final_norm.size()};
    weights.layer = {{"input_layernorm", {layer0.attn_norm.size()}},
                     {"q_proj", matrix_shape(layer0.wq)},
                     {"k_proj", matrix_shape(layer0.wk)},
                     {"v_proj", matrix_shape(layer0.wv)},
                     {"o_proj", matrix_shape(layer0.wo)},
                     {"post_attention_layernorm", {layer0.ffn_norm.size()}},
                     {"gate_proj", matrix_shape(layer0.w_gate)},
                     {"up_proj", matrix_shape(layer0.w_up)},
                     {"down_proj", matrix_shape(layer0.w_down)}};
    r.precision_note = model.precision == WeightPrecision::float32
                           ? "float32 throughout; bfloat16 or float16 weights are widened to float32 exactly, one row at a "
                             "time inside the projection loop"
                           : "weights and KV cache in bfloat16, activations, accumulation and softmax in float32 (PyTorch in "
                             "bfloat16 also rounds every activation to bfloat16, so its logits differ slightly)";

    // 1. The full pass: T tokens at once, every layer's attention captured.
    backend.reset(1);
    PassCapture capture;
    Clock::time_point start = Clock::now();
    const Tensor3<float> full = backend.forward(tokens, &capture);  // [1, T, V]
    r.timing.prefill_seconds = seconds_since(start);
    r.probabilities = captured_probs(capture);  // [L] x [1, Hq, T, T]
    const float* last = full.data() + (T - 1) * V;
    r.last_logits = Tensor3<float>({1, 1, V});
    std::copy(last, last + V, r.last_logits.begin());
    r.block_shapes = capture.shapes;
    r.non_finite = first_non_finite(capture.layers, full);

    // 2. The same prompt one token at a time through an emptied cache.
    backend.reset(1);
    Tensor3<float> cached({1, T, V});
    start = Clock::now();
    for (std::size_t t = 0; t < T; ++t) {
        const Tensor3<float> step = backend.forward(one_row({request.ids[t]}), nullptr);  // [1, 1, V]
        std::copy(step.begin(), step.end(), cached.data() + t * V);
    }
    r.timing.cached_prefill_seconds = seconds_since(start);

    ProbeCachedVsFull& vs = r.cached_vs_full;
    vs.max_abs_diff = max_abs_diff(full, cached);
    vs.max_abs_logit = max_abs(full);
    for (std::size_t t = 0; t < T; ++t) {
        vs.argmax_full.push_back(argmax(full.data() + t * V, V));
        vs.argmax_cached.push_back(argmax(cached.data() + t * V, V));
        vs.argmax_agrees.push_back(vs.argmax_full[t] == vs.argmax_cached[t]);
        vs.disagreements += vs.argmax_agrees[t] ? 0 : 1;
    }

    // 3. Attention sinks, from the full pass: the first-token score
    //    (lessons/head_patterns.hpp) of every layer and head.
    const PatternScores first_token = first_token_scores(r.probabilities);
    r.sinks.queries_from = T / 2;
    r.sinks.heads = first_token.heads;
    for (const std::vector<double>& heads : first_token.heads)
        r.sinks.layer_mean.push_back(std::accumulate(heads.begin(), heads.end(), 0.0) / double(H));
    r.sinks.uniform_baseline = first_token.uniform_baseline;
    if (c.attention_sinks) r.sinks.learned = learned_sink_shares(r.probabilities).heads;

    // 4. The next token after the prompt, then a greedy continuation through the cache.
    for (const TokenChoice& choice : top_next_tokens(last, V, std::size_t(std::max(request.top_k, 0))))
        r.top_next.push_back({choice, token_text(tokenizer, choice.id)});

    ProbeContinuation& continuation = r.continuation;
    continuation.requested = request.generate;
    start = Clock::now();
    if (request.generate > 0) {
        std::int32_t next = vs.argmax_cached[T - 1];
        for (int i = 0;; ++i) {
            continuation.ids.push_back(next);
            continuation.stopped_at_eos = std::find(request.stop_ids.begin(), request.stop_ids.end(), next) != request.stop_ids.end();
            if (continuation.stopped_at_eos || i + 1 >= request.generate) break;
            const Tensor3<float> step = backend.forward(one_row({next}), nullptr);  // [1, 1, V]
            ++r.timing.decode_steps;
            next = argmax(step.data(), V);
        }
    }
    r.timing.decode_seconds = seconds_since(start);
    std::vector<std::int32_t> decodable;
    for (std::int32_t id : continuation.ids) {
        continuation.token_text.push_back(token_text(tokenizer, id));
        if (std::size_t(id) < tokenizer.vocab_size()) decodable.push_back(id);
    }
    // Read on from the prompt: its leading space kept, unless it starts the text (after BOS), as llama2.c prints it.
    continuation.text = tokenizer.decode(decodable, request.ids.back() == request.bos_id);
    r.cache = {backend.cache_dtype(), backend.cached_tokens(), backend.cache_bytes(), cache_payload(c)};

    // The records: p3 and p4 are the check suite's e1 and e3 on the full pass's probabilities.
    const std::vector<CheckRecord> on_probs = check_probabilities(r.probabilities, c.attention_sinks);  // e1, e2, e3
    r.checks = {
        make_check("p1", "cached_matches_full", "logits of the prompt prefilled one token at a time through the KV cache vs one full pass",
                   vs.max_abs_diff, probe_logit_tolerance),
        // The most likely token of a row holding a value that is not finite is undefined.
        make_check("p2", "argmax_agrees", "positions where the cached and the full pass pick a different most likely next token",
                   std::isfinite(vs.max_abs_diff) ? double(vs.disagreements) : INFINITY, 0),
        make_check("p3", "rows_sum_to_one", "sum of every attention probability row vs 1 (all layers, heads, queries)",
                   on_probs[0].max_abs_error, probe_row_sum_tolerance),
        make_check("p4", "future_cells_are_zero", "attention probabilities on keys after their query vs 0 (exact)",
                   on_probs[2].max_abs_error, 0),
    };

    // 5. Optionally, what each head does (two more passes, each from an empty cache).
    if (request.head_patterns) r.head_patterns = head_patterns(backend, request.ids, request.bos_id);
    return r;
}

}  // namespace anatomy
