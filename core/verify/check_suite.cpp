#include "check_suite.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "../model/cache_payload.hpp"
#include "../model/token_batch.hpp"
#include "compare.hpp"

namespace anatomy {
namespace {

// Columns [begin, end) of a [B, T] token matrix.
TokenIds token_columns(const TokenIds& tokens, std::size_t begin, std::size_t end) {
    return xt::view(tokens, xt::all(), xt::range(begin, end));
}

// One pass over whole sequences from an empty cache.   tokens: [B, T]  ->  [B, T, V]
Tensor3<float> full_pass(Backend& backend, const TokenIds& tokens, PassCapture* capture = nullptr) {
    backend.reset(tokens.shape(0));
    return backend.forward(tokens, capture);
}

// The tokens fed through the cache in chunks of `sizes` (repeated), each chunk's
// logits against the full pass's rows. Returns the largest difference; `pattern`
// receives the chunk sizes, "2 + 3 + 1".
double through_cache(Backend& backend, const TokenIds& tokens, const Tensor3<float>& full,
                     const std::vector<std::size_t>& sizes, std::string* pattern = nullptr) {
    backend.reset(tokens.shape(0));
    double error = 0;
    for (std::size_t begin = 0, i = 0; begin < tokens.shape(1); ++i) {
        const std::size_t end = std::min(tokens.shape(1), begin + sizes[i % sizes.size()]);
        const Tensor3<float> chunk = backend.forward(token_columns(tokens, begin, end), nullptr);  // [B, n, V]
        error = std::max(error, max_abs_diff(chunk, xt::view(full, xt::all(), xt::range(begin, end))));
        if (pattern) *pattern += (pattern->empty() ? "" : " + ") + std::to_string(end - begin);
        begin = end;
    }
    return error;
}

// The largest difference at positions 0 .. t (axis `axis`) between two captured
// tensors; tensors a backend does not keep (empty on both sides) add nothing.
template <typename Tensor>
double upto_diff(const Tensor& a, const Tensor& b, std::size_t t, std::size_t axis) {
    if (a.size() == 0 && b.size() == 0) return 0;
    auto upto = xt::range(std::size_t(0), t + 1);
    if (axis == 1) return max_abs_diff(xt::view(a, xt::all(), upto), xt::view(b, xt::all(), upto));
    return max_abs_diff(xt::view(a, xt::all(), xt::all(), upto), xt::view(b, xt::all(), xt::all(), upto));
}

// d. Replace every token after position t; nothing at positions <= t may change, to the bit.
double future_leak(Backend& backend, const TokenIds& tokens, const Tensor3<float>& full, const PassCapture& capture) {
    const std::size_t T = tokens.shape(1);
    double error = 0;
    for (std::size_t t = 0; t + 1 < T; ++t) {
        PassCapture other;
        const Tensor3<float> logits = full_pass(backend, tokens_changed_after(tokens, t, backend.config().vocab_size), &other);
        error = std::max(error, upto_diff(full, logits, t, 1));
        for (std::size_t l = 0; l < capture.layers.size(); ++l) {
            const LayerCapture<float>& a = capture.layers[l];
            const LayerCapture<float>& b = other.layers[l];
            for (auto [x, y] : {std::pair{&a.input, &b.input}, {&a.normed_input, &b.normed_input},
                                {&a.attention_update, &b.attention_update}, {&a.after_attention, &b.after_attention},
                                {&a.ffn_output, &b.ffn_output}, {&a.output, &b.output}})
                error = std::max(error, upto_diff(*x, *y, t, 1));
            for (auto [x, y] : {std::pair{&a.q_rope, &b.q_rope}, {&a.k_rope, &b.k_rope}, {&a.v, &b.v},
                                {&a.probs, &b.probs}, {&a.head_outputs, &b.head_outputs}})
                error = std::max(error, upto_diff(*x, *y, t, 2));
        }
    }
    return error;
}

// f2. What the cache holds after a pass over `tokens` vs the formula, in scalars and bytes.
double cache_fill_error(Backend& backend, const TokenIds& tokens) {
    full_pass(backend, tokens);
    const ModelConfig& c = backend.config();
    const int scalar = int(dtype_size(backend.cache_dtype()));
    const double stored_bytes = double(backend.cache_bytes());
    const double stored = stored_bytes / scalar;
    const double expected = double(cache_payload(c).scalars_per_token) * double(tokens.size());
    const double expected_bytes = double(cache_bytes(c, scalar, std::int64_t(tokens.shape(1)), std::int64_t(tokens.shape(0))));
    return std::abs(stored - expected) + std::abs(stored_bytes - expected_bytes);
}

// g. Every sequence of a batch vs the same sequence run alone.
double batch_apart(Backend& backend, const TokenIds& batch) {
    PassCapture together;
    const Tensor3<float> logits = full_pass(backend, batch, &together);
    double error = 0;
    for (std::size_t b = 0; b < batch.shape(0); ++b) {
        PassCapture alone;
        const Tensor3<float> single = full_pass(backend, xt::view(batch, xt::range(b, b + 1), xt::all()), &alone);
        error = std::max(error, max_abs_diff(xt::view(logits, xt::range(b, b + 1)), single));
        for (std::size_t l = 0; l < alone.layers.size(); ++l)
            error = std::max(error, max_abs_diff(xt::view(together.layers[l].probs, xt::range(b, b + 1)), alone.layers[l].probs));
    }
    return error;
}

std::string dtype_word(DType dtype) { return dtype == DType::f32 ? "fp32" : dtype == DType::bf16 ? "bf16" : "fp16"; }

}  // namespace

std::vector<Tensor4<float>> captured_probs(const PassCapture& capture) {
    std::vector<Tensor4<float>> probs;
    for (const LayerCapture<float>& layer : capture.layers) probs.push_back(layer.probs);
    return probs;
}

// e. Properties every causal probability matrix must have, whatever the weights.
// A matrix holding a value that is not finite is not a probability matrix: all
// three then record an infinite error, wherever that value sits.
std::vector<CheckRecord> check_probabilities(const std::vector<Tensor4<float>>& probs, bool sinks) {
    double sum_error = 0, first_row_error = 0, upper_error = 0;
    for (const Tensor4<float>& p : probs) {  // [B, Hq, T, S]
        const std::size_t B = p.shape(0), H = p.shape(1), T = p.shape(2), S = p.shape(3);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t t = 0; t < T; ++t) {
                    double sum = 0;
                    for (std::size_t s = 0; s < S; ++s) {
                        const double value = p(b, h, t, s);
                        sum += value;
                        if (!std::isfinite(value)) sum_error = first_row_error = upper_error = INFINITY;
                        if (!causal_allows(std::int64_t(t), std::int64_t(s), std::int64_t(S - T)))
                            upper_error = worse_error(upper_error, std::abs(value));
                        if (t == 0 && S == T) {
                            // With sinks key 0 keeps what the sink leaves: anything in (0, 1].
                            const double expected = s != 0 ? 0.0 : sinks ? std::clamp(value, std::nextafter(0.0, 1.0), 1.0) : 1.0;
                            first_row_error = worse_error(first_row_error, std::abs(value - expected));
                        }
                    }
                    // With sinks the row sums to one minus the sink's share: an error only outside (0, 1].
                    const double target = sinks ? std::clamp(sum, std::nextafter(0.0, 1.0), 1.0) : 1.0;
                    sum_error = worse_error(sum_error, std::abs(sum - target));
                }
    }
    // Each of the <= S float probabilities carries at most half an ulp of rounding
    // (6e-8); a row of up to 32 keys then sums to 1 within 2e-6. We allow 1e-5.
    if (sinks)
        return {make_check("e1", "rows_sum_to_one_minus_sink", "sum of every probability row inside (0, 1] (the rest is the sink's)", sum_error, 1e-5),
                make_check("e2", "first_row_sees_itself", "probability row 0 vs [p, 0, ..., 0], 0 < p <= 1 (exact)", first_row_error, 0.0),
                make_check("e3", "future_cells_are_zero", "forbidden upper-triangle probabilities vs 0 (exact)", upper_error, 0.0)};
    return {make_check("e1", "rows_sum_to_one", "sum of every probability row vs 1", sum_error, 1e-5),
            make_check("e2", "first_row_sees_itself", "probability row 0 vs [1, 0, ..., 0] (exact)", first_row_error, 0.0),
            make_check("e3", "future_cells_are_zero", "forbidden upper-triangle probabilities vs 0 (exact)", upper_error, 0.0)};
}

// h2. Query heads that share a KV head still attend differently (their queries differ).
CheckRecord check_shared_heads_differ(const ModelConfig& c, const std::vector<Tensor4<float>>& probs, const std::string& input) {
    if (c.kv_group() < 2) throw std::logic_error("h2: no KV head is shared by two query heads");
    double smallest = INFINITY;
    bool unmeasured = false;
    const int group = c.kv_group();
    for (const Tensor4<float>& p : probs)  // [B, Hq, T, S]
        for (int g = 0; g < c.n_kv_heads; ++g)
            for (int i = 1; i < group; ++i) {
                const auto first = xt::view(p, xt::all(), g * group);
                const auto other = xt::view(p, xt::all(), g * group + i);
                const double gap = max_abs_diff(first, other);
                unmeasured = unmeasured || std::isinf(gap);  // a value that is not finite in either head
                smallest = std::min(smallest, gap);
            }
    return make_check("h2", "shared_kv_heads_differ",
                      "smallest max |p_h - p_h'| over query heads sharing a KV head" + (input.empty() ? "" : ", " + input) +
                          " (must exceed the bound)",
                      unmeasured ? INFINITY : smallest, 1e-3, ">");
}

std::optional<TokenIds> shared_heads_batch(const TokenIds& tokens, int vocab_size) {
    const std::size_t B = tokens.shape(0), T = tokens.shape(1);
    if (T < 2) throw InputError("verification needs at least 2 tokens per sequence");
    if (B * (T - 1) >= shared_heads_rows) return std::nullopt;
    const auto first = xt::row(tokens, 0);
    const std::vector<std::int32_t> ids(first.begin(), first.end());
    return make_batch(ids, int((shared_heads_rows + T - 2) / (T - 1)), vocab_size);
}

std::optional<NonFinite> first_non_finite(const std::vector<LayerCapture<float>>& layers, const Tensor3<float>& logits) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const LayerCapture<float>& a = layers[l];
        const std::string at = "layers." + std::to_string(l) + ".";
        // In the order the layer computes them; a backend that keeps only probs leaves the rest empty.
        for (const auto& [name, tensor] : std::initializer_list<std::pair<const char*, const Tensor3<float>*>>{
                 {"input", &a.input}, {"attn_norm", &a.normed_input}})
            if (auto found = first_non_finite(at + name, *tensor)) return found;
        for (const auto& [name, tensor] : std::initializer_list<std::pair<const char*, const Tensor4<float>*>>{
                 {"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"q_rope", &a.q_rope}, {"k_rope", &a.k_rope},
                 {"scores", &a.scores}, {"probs", &a.probs}, {"heads", &a.head_outputs}})
            if (auto found = first_non_finite(at + name, *tensor)) return found;
        for (const auto& [name, tensor] : std::initializer_list<std::pair<const char*, const Tensor3<float>*>>{
                 {"attn_out", &a.attention_update}, {"resid_mid", &a.after_attention}, {"ffn_out", &a.ffn_output},
                 {"out", &a.output}})
            if (auto found = first_non_finite(at + name, *tensor)) return found;
    }
    return first_non_finite("logits", logits);
}

CheckRecord check_backends_agree(Backend& grouped, Backend& repeated, const TokenIds& tokens) {
    PassCapture a, b;
    const Tensor3<float> logits_a = full_pass(grouped, tokens, &a);
    const Tensor3<float> logits_b = full_pass(repeated, tokens, &b);
    double error = max_abs_diff(logits_a, logits_b);
    for (std::size_t l = 0; l < a.layers.size(); ++l) error = std::max(error, max_abs_diff(a.layers[l].probs, b.layers[l].probs));
    return make_check("c", "grouped_matches_repeated_kv",
                      "grouped-query attention vs repeated-K/V attention (logits and every probability)", error, 1e-6);
}

std::vector<CheckRecord> run_check_suite(Backend& backend, const TokenIds& tokens, const SuiteOptions& o,
                                         PassCapture* full_capture) {
    if (tokens.shape(1) < 2) throw InputError("verification needs at least 2 tokens per sequence");
    PassCapture capture;
    const Tensor3<float> full = full_pass(backend, tokens, &capture);  // [B, T, V]
    const std::vector<Tensor4<float>> probs = captured_probs(capture);  // per layer [B, Hq, T, T]

    std::vector<CheckRecord> checks;
    if (o.cache_checks) {
        checks.push_back(make_check("a", "decode_matches_full", "single-token decode through the KV cache vs full-sequence logits",
                                    through_cache(backend, tokens, full, {1}), o.cache_tolerance));
        std::string pattern;
        const double chunked = through_cache(backend, tokens, full, {2, 3, 1}, &pattern);
        checks.push_back(make_check("b", "chunked_prefill_matches_full",
                                    "chunked prefill (" + pattern + " tokens) vs full-sequence logits", chunked,
                                    o.cache_tolerance));
    }
    checks.push_back(make_check("d", "future_tokens_do_not_leak",
                                "every output at positions <= t, before vs after changing all tokens after t (bit for bit)",
                                future_leak(backend, tokens, full, capture), 0.0));
    for (CheckRecord& r : check_probabilities(probs, backend.config().attention_sinks)) checks.push_back(std::move(r));
    checks.push_back(make_check("f2", "payload_matches_cache",
                                "scalars and " + dtype_word(backend.cache_dtype()) +
                                    " bytes held by the filled cache vs 2 x L x Hkv x dh x tokens x batch",
                                cache_fill_error(backend, tokens), 0.0));
    const TokenIds batch = batch_of_two_or_more(tokens, backend.config().vocab_size);
    checks.push_back(make_check("g", "batch_matches_single",
                                "each of " + std::to_string(batch.shape(0)) +
                                    " different sequences in one batch vs run alone (logits, probabilities)",
                                batch_apart(backend, batch), o.batch_tolerance));
    if (backend.config().kv_group() >= 2) {
        if (const std::optional<TokenIds> own = shared_heads_batch(tokens, backend.config().vocab_size)) {
            PassCapture capture_own;
            full_pass(backend, *own, &capture_own);
            checks.push_back(check_shared_heads_differ(backend.config(), captured_probs(capture_own),
                                                       "on a batch of its own: " + std::to_string(own->shape(0)) +
                                                           " sequences of " + std::to_string(own->shape(1)) + " tokens"));
        } else {
            checks.push_back(check_shared_heads_differ(backend.config(), probs));
        }
    }
    for (CheckRecord& r : checks) {
        r.id = o.id_prefix + r.id;
        r.name = o.name_prefix + r.name;
        r.compares = o.what + r.compares;
    }
    if (full_capture) *full_capture = std::move(capture);
    return checks;
}

}  // namespace anatomy
