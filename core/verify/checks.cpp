#include "checks.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include "../model/cache_payload.hpp"
#include "../ops/rope.hpp"
#include "check_suite.hpp"
#include "compare.hpp"

namespace anatomy {

CheckRecord make_check(std::string id, std::string name, std::string compares, double error, double tolerance,
                       std::string relation) {
    // An error that is not finite (NaN: it could not be measured; infinity: a value
    // that is not finite was compared) never passes, whichever way the relation points.
    if (std::isnan(error)) error = INFINITY;
    const bool measured = std::isfinite(error) && std::isfinite(tolerance);
    const bool passed = measured && (relation == "<=" ? error <= tolerance : error > tolerance);
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

// f1. The payload formula against the figures published for TinyLlama-1.1B.
CheckRecord check_payload_formula() {
    const CachePayload tiny_llama = cache_payload(tinyllama_config());
    const double published_error = std::abs(double(tiny_llama.scalars_per_token - 11264)) +
                                   std::abs(double(tiny_llama.bytes_per_token_fp32 - 45056)) +
                                   std::abs(double(tiny_llama.bytes_per_token_16bit - 22528));
    return make_check("f1", "payload_formula_tinyllama",
                      "2 x 22 layers x 4 KV heads x 64 = 11,264 scalars, 45,056 B fp32, 22,528 B 2-byte per token",
                      published_error, 0.0);
}

// h1. After RoPE, q.k depends on the offset between positions, not on where the pair sits.
CheckRecord check_rope_relative(const ModelConfig& c, const LayerCapture<float>& layer) {
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
                error = worse_error(error, std::abs(dot_at(std::int64_t(t - s) + shift, shift) - reference));
        }
    // The rotation is exact in real numbers; in float, cos/sin rounded to 24 bits
    // and products of O(1) values leave ~1e-7 per term; 1e-5 is ten times the float error over dh terms of O(1).
    return make_check("h1", "rope_depends_on_offset",
                      "q.k after RoPE at positions (m, n) vs (m + k, n + k), k up to 1000, layer 0 head 0", error, 1e-5);
}

}  // namespace

std::vector<CheckRecord> run_checks(const Model<float>& model, const TokenIds& tokens) {
    if (tokens.shape(1) < 2) throw InputError("verification needs at least 2 tokens per sequence");
    if (tokens.shape(1) > max_check_tokens)
        throw InputError("verification takes at most " + std::to_string(max_check_tokens) + " tokens per sequence, not " +
                         std::to_string(tokens.shape(1)));
    // The implementation-independent suite on the model as it runs, c against the
    // repeated-K/V reference path, and the two facts of the config and of RoPE.
    TinyBackend grouped(model), repeated(model, AttentionPath::repeated_kv);
    PassCapture capture;  // the full pass, for h1
    const std::vector<CheckRecord> suite = run_check_suite(grouped, tokens, {}, &capture);  // a b d e1 e2 e3 f2 g h2

    std::vector<CheckRecord> checks;
    const auto from_suite = [&](std::initializer_list<const char*> ids) {
        for (const char* id : ids)
            for (const CheckRecord& r : suite)
                if (r.id == id) checks.push_back(r);
    };
    from_suite({"a", "b"});
    checks.push_back(check_backends_agree(grouped, repeated, tokens));
    from_suite({"d", "e1", "e2", "e3"});
    checks.push_back(check_payload_formula());
    from_suite({"f2", "g"});
    checks.push_back(check_rope_relative(model.config, capture.layers[0]));
    from_suite({"h2"});  // absent when no KV head is shared
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
