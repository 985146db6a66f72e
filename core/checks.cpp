#include "checks.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include "cache_payload.hpp"
#include "forward.hpp"
#include "ops/rope.hpp"

namespace anatomy {
CheckRecord make_check(std::string id, std::string name, std::string compares, double error, double tolerance,
                       std::string relation) {
    const bool passed = relation == "<=" ? error <= tolerance : error > tolerance;
    return {std::move(id), std::move(name), std::move(compares), error, tolerance, std::move(relation), passed};
}

TokenIds tokens_changed_after(const TokenIds& tokens, std::size_t t, int vocab_size) {
    TokenIds changed = tokens;
    for (std::size_t b = 0; b < tokens.shape(0); ++b)
        for (std::size_t s = t + 1; s < tokens.shape(1); ++s)
            changed(b, s) = (tokens(b, s) + 1 + std::int32_t(s)) % vocab_size;
    return changed;
}

TokenIds batch_of_two_or_more(const TokenIds& tokens, int vocab_size) {
    if (tokens.shape(0) >= 2) return tokens;
    TokenIds batch({2, tokens.shape(1)});
    for (std::size_t t = 0; t < tokens.shape(1); ++t) {
        batch(0, t) = tokens(0, t);
        batch(1, t) = (tokens(0, t) * 7 + 3 + std::int32_t(t)) % vocab_size;
    }
    return batch;
}

namespace {

template <typename A, typename B>
double max_abs_diff(const A& a, const B& b) {
    if (a.shape().size() != b.shape().size() || !std::equal(a.shape().begin(), a.shape().end(), b.shape().begin()))
        return INFINITY;  // a shape mismatch can never pass a tolerance
    double worst = 0;
    auto ia = a.begin();
    for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) {
        const double d = std::abs(double(*ia) - double(*ib));
        if (std::isnan(d)) return INFINITY;
        worst = std::max(worst, d);
    }
    return worst;
}

// Columns [begin, end) of a [B, T] token matrix.
TokenIds token_columns(const TokenIds& tokens, std::size_t begin, std::size_t end) {
    return xt::view(tokens, xt::all(), xt::range(begin, end));
}

// a. Feed the tokens one at a time through the cache; row t must equal the full pass's row t.
CheckRecord check_decode(const Model<float>& model, const TokenIds& tokens, const Tensor3<float>& full) {
    KVCache<float> cache = empty_cache<float>(model.config, tokens.shape(0));
    double error = 0;
    for (std::size_t t = 0; t < tokens.shape(1); ++t) {
        const Tensor3<float> step = forward(model, cache, token_columns(tokens, t, t + 1));  // [B, 1, V]
        error = std::max(error, max_abs_diff(step, xt::view(full, xt::all(), xt::range(t, t + 1))));
    }
    // Same operations in the same order per row, so we expect 0; 1e-5 allows a
    // compiler to reorder float sums without hiding a real error (logits are O(1-10)).
    return make_check("a", "decode_matches_full", "single-token decode through the KV cache vs full-sequence logits",
                      error, 1e-5);
}

// b. Prefill in chunks of 2, 3, 1, 2, 3, 1, ... tokens.
CheckRecord check_chunked(const Model<float>& model, const TokenIds& tokens, const Tensor3<float>& full) {
    const std::size_t sizes[] = {2, 3, 1};
    KVCache<float> cache = empty_cache<float>(model.config, tokens.shape(0));
    std::string pattern;
    double error = 0;
    for (std::size_t begin = 0, i = 0; begin < tokens.shape(1); ++i) {
        const std::size_t end = std::min(tokens.shape(1), begin + sizes[i % 3]);
        const Tensor3<float> chunk = forward(model, cache, token_columns(tokens, begin, end));  // [B, n, V]
        error = std::max(error, max_abs_diff(chunk, xt::view(full, xt::all(), xt::range(begin, end))));
        pattern += (pattern.empty() ? "" : " + ") + std::to_string(end - begin);
        begin = end;
    }
    return make_check("b", "chunked_prefill_matches_full", "chunked prefill (" + pattern + " tokens) vs full-sequence logits",
                      error, 1e-5);
}

// c. Shared KV heads read in place vs K/V explicitly copied per query head.
CheckRecord check_grouped(const Model<float>& model, const TokenIds& tokens, const Tensor3<float>& full,
                          const ForwardCapture<float>& grouped) {
    ForwardCapture<float> repeated;
    const Tensor3<float> logits = full_forward(model, tokens, AttentionPath::repeated_kv, &repeated);
    double error = max_abs_diff(full, logits);
    for (std::size_t l = 0; l < grouped.layers.size(); ++l)
        error = std::max(error, max_abs_diff(grouped.layers[l].probs, repeated.layers[l].probs));
    // The copy changes which memory is read, not the arithmetic: expect 0.
    return make_check("c", "grouped_matches_repeated_kv",
                      "grouped-query attention vs repeated-K/V attention (logits and every probability)", error, 1e-6);
}

// d. Replace every token after position t; nothing at positions <= t may change, to the bit.
CheckRecord check_future_masking(const Model<float>& model, const TokenIds& tokens, const Tensor3<float>& full,
                                 const ForwardCapture<float>& capture) {
    const std::size_t T = tokens.shape(1);
    const int V = model.config.vocab_size;
    double error = 0;
    for (std::size_t t = 0; t + 1 < T; ++t) {
        const TokenIds changed = tokens_changed_after(tokens, t, V);
        ForwardCapture<float> other;
        const Tensor3<float> logits = full_forward(model, changed, AttentionPath::grouped, &other);
        auto upto = xt::range(std::size_t(0), t + 1);
        error = std::max(error, max_abs_diff(xt::view(full, xt::all(), upto), xt::view(logits, xt::all(), upto)));
        for (std::size_t l = 0; l < capture.layers.size(); ++l) {
            const LayerCapture<float>& a = capture.layers[l];
            const LayerCapture<float>& b = other.layers[l];
            for (auto [x, y] : {std::pair{&a.input, &b.input}, {&a.normed_input, &b.normed_input},
                                {&a.attention_update, &b.attention_update}, {&a.after_attention, &b.after_attention},
                                {&a.ffn_output, &b.ffn_output}, {&a.output, &b.output}})
                error = std::max(error, max_abs_diff(xt::view(*x, xt::all(), upto), xt::view(*y, xt::all(), upto)));
            for (auto [x, y] : {std::pair{&a.q_rope, &b.q_rope}, {&a.k_rope, &b.k_rope}, {&a.v, &b.v},
                                {&a.probs, &b.probs}, {&a.head_outputs, &b.head_outputs}})
                error = std::max(error, max_abs_diff(xt::view(*x, xt::all(), xt::all(), upto),
                                                     xt::view(*y, xt::all(), xt::all(), upto)));
        }
    }
    return make_check("d", "future_tokens_do_not_leak",
                      "every output at positions <= t, before vs after changing all tokens after t (bit for bit)", error, 0.0);
}

}  // namespace

// e. Properties every causal probability matrix must have, whatever the weights.
std::vector<CheckRecord> check_probabilities(const std::vector<Tensor4<float>>& probs) {
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
                        if (s > t + (S - T)) upper_error = std::max(upper_error, std::abs(value));
                        if (t == 0 && S == T) first_row_error = std::max(first_row_error, std::abs(value - (s == 0 ? 1.0 : 0.0)));
                    }
                    sum_error = std::max(sum_error, std::abs(sum - 1.0));
                }
    }
    // Each of the <= S float probabilities carries at most half an ulp of rounding
    // (6e-8); a row of up to 32 keys then sums to 1 within 2e-6. We allow 1e-5.
    return {make_check("e1", "rows_sum_to_one", "sum of every probability row vs 1", sum_error, 1e-5),
            make_check("e2", "first_row_sees_itself", "probability row 0 vs [1, 0, ..., 0] (exact)", first_row_error, 0.0),
            make_check("e3", "future_cells_are_zero", "forbidden upper-triangle probabilities vs 0 (exact)", upper_error, 0.0)};
}

namespace {

// f. Cache payload: the formula, the figures published for TinyLlama-1.1B, and the cache actually filled.
std::vector<CheckRecord> check_payload(const Model<float>& model, const TokenIds& tokens) {
    const CachePayload tiny_llama = cache_payload(tinyllama_config());
    const double published_error = std::abs(double(tiny_llama.scalars_per_token - 11264)) +
                                   std::abs(double(tiny_llama.bytes_per_token_fp32 - 45056)) +
                                   std::abs(double(tiny_llama.bytes_per_token_16bit - 22528));
    KVCache<float> cache = empty_cache<float>(model.config, tokens.shape(0));
    forward(model, cache, tokens);
    const double expected = double(cache_payload(model.config).scalars_per_token) * double(tokens.size());
    const double stored = double(cache.stored_scalars());
    const double stored_bytes = double(cache.stored_scalars() * sizeof(float));
    const double expected_bytes = double(cache_bytes(model.config, 4, std::int64_t(tokens.shape(1)), std::int64_t(tokens.shape(0))));
    return {make_check("f1", "payload_formula_tinyllama",
                       "2 x 22 layers x 4 KV heads x 64 = 11,264 scalars, 45,056 B fp32, 22,528 B 2-byte per token",
                       published_error, 0.0),
            make_check("f2", "payload_matches_cache",
                       "scalars and fp32 bytes held by the filled cache vs 2 x L x Hkv x dh x tokens x batch",
                       std::abs(stored - expected) + std::abs(stored_bytes - expected_bytes), 0.0)};
}

// g. Every sequence of a batch vs the same sequence run alone.
CheckRecord check_batch(const Model<float>& model, const TokenIds& tokens) {
    const TokenIds batch = batch_of_two_or_more(tokens, model.config.vocab_size);
    ForwardCapture<float> together;
    const Tensor3<float> logits = full_forward(model, batch, AttentionPath::grouped, &together);
    double error = 0;
    for (std::size_t b = 0; b < batch.shape(0); ++b) {
        ForwardCapture<float> alone;
        const Tensor3<float> single = full_forward(model, token_columns(xt::view(batch, xt::range(b, b + 1)), 0, batch.shape(1)),
                                                   AttentionPath::grouped, &alone);
        error = std::max(error, max_abs_diff(xt::view(logits, xt::range(b, b + 1)), single));
        for (std::size_t l = 0; l < alone.layers.size(); ++l)
            error = std::max(error, max_abs_diff(xt::view(together.layers[l].probs, xt::range(b, b + 1)), alone.layers[l].probs));
    }
    // Sequences never mix and every sum runs in the same order: expect 0.
    return make_check("g", "batch_matches_single",
                      "each of " + std::to_string(batch.shape(0)) + " different sequences in one batch vs run alone (logits, probabilities)",
                      error, 1e-6);
}

// h1. After RoPE, q.k depends on the offset between positions, not on where the pair sits.
CheckRecord check_rope_relative(const ModelConfig& c, const ForwardCapture<float>& capture) {
    const LayerCapture<float>& layer = capture.layers[0];
    const std::size_t T = layer.q.shape(2), dh = layer.q.shape(3);
    double error = 0;
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t s = 0; s <= t; ++s) {
            // Head 0's raw query at t and raw key at s, as [1, 1, 1, dh] tensors.
            const Tensor4<float> q = xt::view(layer.q, xt::range(std::size_t(0), std::size_t(1)), xt::range(std::size_t(0), std::size_t(1)), xt::range(t, t + 1));
            const Tensor4<float> k = xt::view(layer.k, xt::range(std::size_t(0), std::size_t(1)), xt::range(std::size_t(0), std::size_t(1)), xt::range(s, s + 1));
            auto dot_at = [&](std::int64_t q_pos, std::int64_t k_pos) {
                const Tensor4<float> qr = apply_rope(q, {q_pos}, c.rope_theta, c.rope_pairing);
                const Tensor4<float> kr = apply_rope(k, {k_pos}, c.rope_theta, c.rope_pairing);
                double dot = 0;
                for (std::size_t d = 0; d < dh; ++d) dot += double(qr(0, 0, 0, d)) * double(kr(0, 0, 0, d));
                return dot;
            };
            const double reference = dot_at(std::int64_t(t - s), 0);
            for (std::int64_t shift : {std::int64_t(s), std::int64_t(s) + 17, std::int64_t(s) + 1000})
                error = std::max(error, std::abs(dot_at(std::int64_t(t - s) + shift, shift) - reference));
        }
    // The rotation is exact in real numbers; in float, cos/sin rounded to 24 bits
    // and products of O(1) values leave ~1e-7 per term; 1e-5 is ten times the float error over dh terms of O(1).
    return make_check("h1", "rope_depends_on_offset",
                      "q.k after RoPE at positions (m, n) vs (m + k, n + k), k up to 1000, layer 0 head 0", error, 1e-5);
}

}  // namespace

// h2. Query heads that share a KV head still attend differently (their queries differ).
CheckRecord check_shared_heads_differ(const ModelConfig& c, const std::vector<Tensor4<float>>& probs) {
    double smallest = INFINITY;
    const int group = c.kv_group();
    for (const Tensor4<float>& p : probs)  // [B, Hq, T, S]
        for (int g = 0; g < c.n_kv_heads; ++g)
            for (int i = 1; i < group; ++i) {
                const auto first = xt::view(p, xt::all(), g * group);
                const auto other = xt::view(p, xt::all(), g * group + i);
                smallest = std::min(smallest, max_abs_diff(first, other));
            }
    if (group < 2) smallest = INFINITY;  // no KV head is shared: nothing to compare
    return make_check("h2", "shared_kv_heads_differ",
                      "smallest max |p_h - p_h'| over query heads sharing a KV head (must exceed the bound)", smallest,
                      1e-3, ">");
}

std::vector<CheckRecord> run_checks(const Model<float>& model, const TokenIds& tokens) {
    if (tokens.shape(1) < 2) throw InputError("verification needs at least 2 tokens per sequence");
    if (tokens.shape(1) > max_check_tokens)
        throw InputError("verification takes at most " + std::to_string(max_check_tokens) + " tokens per sequence, not " +
                         std::to_string(tokens.shape(1)));
    ForwardCapture<float> capture;
    const Tensor3<float> full = full_forward(model, tokens, AttentionPath::grouped, &capture);  // [B, T, V]

    std::vector<CheckRecord> checks;
    checks.push_back(check_decode(model, tokens, full));
    checks.push_back(check_chunked(model, tokens, full));
    checks.push_back(check_grouped(model, tokens, full, capture));
    checks.push_back(check_future_masking(model, tokens, full, capture));
    std::vector<Tensor4<float>> probs;  // per layer [B, Hq, T, T]
    for (const LayerCapture<float>& layer : capture.layers) probs.push_back(layer.probs);
    for (CheckRecord& r : check_probabilities(probs)) checks.push_back(std::move(r));
    for (CheckRecord& r : check_payload(model, tokens)) checks.push_back(std::move(r));
    checks.push_back(check_batch(model, tokens));
    checks.push_back(check_rope_relative(model.config, capture));
    checks.push_back(check_shared_heads_differ(model.config, probs));
    return checks;
}

bool all_passed(const std::vector<CheckRecord>& checks) {
    return std::all_of(checks.begin(), checks.end(), [](const CheckRecord& c) { return c.passed; });
}

nlohmann::json check_to_json(const CheckRecord& c) {
    // JSON has no infinity; an unbounded error is written as null.
    nlohmann::json error = std::isfinite(c.max_abs_error) ? nlohmann::json(c.max_abs_error) : nlohmann::json(nullptr);
    return {{"id", c.id},           {"name", c.name},       {"compares", c.compares},
            {"max_abs_error", error}, {"tolerance", c.tolerance}, {"relation", c.relation},
            {"passed", c.passed}};
}

}  // namespace anatomy
