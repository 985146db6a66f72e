// The check suite (core/verify/check_suite.hpp) against backends that are wrong on
// purpose: each must fail exactly the checks written to catch its mistake, and a
// faithful backend must pass them all. The faulty backend is the tiny model's
// forward written out from the core's operations with one switch for the fault.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "checkpoint/hf_llama.hpp"
#include "ops/attention.hpp"
#include "ops/embedding.hpp"
#include "ops/heads.hpp"
#include "ops/linear.hpp"
#include "ops/logits.hpp"
#include "ops/rms_norm.hpp"
#include "ops/rope.hpp"
#include "ops/swiglu.hpp"
#include "pretrained/pretrained_backend.hpp"
#include "verify/check_suite.hpp"
#include "verify/compare.hpp"

#include "test_helpers.hpp"

using namespace anatomy;
using namespace anatomy::test;

namespace {

enum class Fault {
    none,
    mask_shifted,          // each query also sees the next key: s <= t + history + 1
    positions_restart,     // every call numbers its tokens from 0, forgetting the cache
    kv_head_modulo,        // query head h reads KV head h mod Hkv instead of h / group
    softmax_over_queries,  // each key column normalised instead of each query row
    batch_rows_swapped,    // with two or more sequences, the first two come back swapped
};

// [B, Hkv, S, dh] -> [B, Hq, S, dh] with head h taken from KV head h mod Hkv (the mistake).
Tensor4<float> heads_by_modulo(const Tensor4<float>& kv, std::size_t Hq) {
    const std::size_t B = kv.shape(0), Hkv = kv.shape(1), S = kv.shape(2), dh = kv.shape(3);
    Tensor4<float> out({B, Hq, S, dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) xt::view(out, b, h) = xt::view(kv, b, h % Hkv);
    return out;
}

class FaultyBackend final : public Backend {
public:
    FaultyBackend(const Model<float>& model, Fault fault, AttentionPath path = AttentionPath::grouped)
        : model_(model), fault_(fault), path_(path) {}
    const ModelConfig& config() const override { return model_.config; }
    void reset(std::size_t batch) override { cache_ = empty_cache<float>(model_.config, batch); }
    DType cache_dtype() const override { return DType::f32; }
    std::int64_t cached_tokens() const override { return cache_.position; }
    std::size_t cache_bytes() const override { return cache_.stored_scalars() * sizeof(float); }

    Tensor3<float> forward(const TokenIds& tokens, PassCapture* capture) override {
        const ModelConfig& c = model_.config;
        const std::size_t B = tokens.shape(0), T = tokens.shape(1);
        std::vector<std::int64_t> positions(T);
        std::iota(positions.begin(), positions.end(), fault_ == Fault::positions_restart ? 0 : cache_.position);
        Tensor3<float> x = embed(model_.weights.embedding, tokens);  // [B, T, D]
        if (capture) *capture = {};
        for (int l = 0; l < c.n_layers; ++l) {
            const LayerWeights<float>& w = model_.weights.layers[std::size_t(l)];
            const Tensor3<float> h = rms_norm(x, w.attn_norm, c.rms_norm_eps);
            const Tensor4<float> q = apply_rope(split_heads(linear(h, w.wq), c.n_heads), positions, c.rope_theta, c.rope_pairing);
            const Tensor4<float> k = apply_rope(split_heads(linear(h, w.wk), c.n_kv_heads), positions, c.rope_theta, c.rope_pairing);
            const Tensor4<float> v = split_heads(linear(h, w.wv), c.n_kv_heads);
            cache_.keys[std::size_t(l)] = append_rows(cache_.keys[std::size_t(l)], k);
            cache_.values[std::size_t(l)] = append_rows(cache_.values[std::size_t(l)], v);
            const Tensor4<float>& k_all = cache_.keys[std::size_t(l)];    // [B, Hkv, S, dh]
            const Tensor4<float>& v_all = cache_.values[std::size_t(l)];
            const std::size_t S = k_all.shape(2), history = S - T;

            Tensor4<float> k_read = k_all, v_read = v_all;
            if (path_ == AttentionPath::repeated_kv) {  // the reference path, always right
                k_read = repeat_kv(k_all, c.kv_group());
                v_read = repeat_kv(v_all, c.kv_group());
            } else if (fault_ == Fault::kv_head_modulo) {
                k_read = heads_by_modulo(k_all, std::size_t(c.n_heads));
                v_read = heads_by_modulo(v_all, std::size_t(c.n_heads));
            }
            Mask allowed = causal_mask(T, S);
            if (fault_ == Fault::mask_shifted)
                for (std::size_t t = 0; t < T; ++t)
                    for (std::size_t s = 0; s < S; ++s) allowed(t, s) = s <= t + history + 1;
            const Tensor4<float> masked = apply_mask(attention_scores(q, k_read), allowed);  // [B, Hq, T, S]
            Tensor4<float> probs;
            if (fault_ == Fault::softmax_over_queries) {
                const Tensor4<float> by_key = xt::transpose(masked, {0, 1, 3, 2});  // [B, Hq, S, T]
                probs = xt::transpose(softmax_rows(by_key), {0, 1, 3, 2});
            } else {
                probs = softmax_rows(masked);
            }
            const Tensor3<float> after = residual_add(x, linear(merge_heads(weighted_values(probs, v_read)), w.wo));
            x = residual_add(after, swiglu(rms_norm(after, w.ffn_norm, c.rms_norm_eps), w.w_gate, w.w_up, w.w_down));
            if (capture) capture->layers.emplace_back().probs = std::move(probs);
        }
        cache_.position += std::int64_t(T);
        Tensor3<float> logits = tied_logits(rms_norm(x, model_.weights.final_norm, c.rms_norm_eps), model_.weights.embedding);
        if (fault_ == Fault::batch_rows_swapped && B >= 2) {
            const Matrix<float> first = xt::view(logits, 0);  // [T, V]
            xt::view(logits, 0) = xt::view(logits, 1);
            xt::view(logits, 1) = first;
        }
        return logits;
    }

private:
    const Model<float>& model_;
    Fault fault_;
    AttentionPath path_;
    KVCache<float> cache_;
};

// The ids of the checks that fail: the suite, plus c against the repeated-K/V path.
std::set<std::string> failing(const Model<float>& model, Fault fault, const TokenIds& tokens) {
    FaultyBackend grouped(model, fault), repeated(model, fault, AttentionPath::repeated_kv);
    std::vector<CheckRecord> checks = run_check_suite(grouped, tokens);
    checks.push_back(check_backends_agree(grouped, repeated, tokens));
    std::set<std::string> ids;
    for (const CheckRecord& r : checks)
        if (!r.passed) ids.insert(r.id);
    return ids;
}

TokenIds demo_tokens() {
    TokenIds tokens({1, 6});
    const std::int32_t ids[] = {1, 2, 3, 4, 5, 6};
    std::copy(ids, ids + 6, tokens.begin());
    return tokens;
}

}  // namespace

TEST_CASE("the faithful backend computes the tiny model exactly and passes every check") {
    const Model<float> model = random_model(tiny_config());
    const TokenIds tokens = demo_tokens();
    FaultyBackend faithful(model, Fault::none);
    TinyBackend tiny(model);
    faithful.reset(1);
    tiny.reset(1);
    CHECK(max_abs_diff(faithful.forward(tokens, nullptr), tiny.forward(tokens, nullptr)) == 0.0);
    CHECK(failing(model, Fault::none, tokens).empty());
}

TEST_CASE("each wrong backend fails exactly the checks that name its mistake") {
    const Model<float> model = random_model(tiny_config());
    const TokenIds tokens = demo_tokens();
    using Ids = std::set<std::string>;
    // A mask one key too far: the future leaks (d), row 0 sees two keys (e2), future
    // cells are not 0 (e3), and the cache, which holds no future keys, disagrees (a, b).
    CHECK(failing(model, Fault::mask_shifted, tokens) == Ids{"a", "b", "d", "e2", "e3"});
    // Positions from 0 at every call: only passes through the cache see it.
    CHECK(failing(model, Fault::positions_restart, tokens) == Ids{"a", "b"});
    // The wrong KV head: consistent with itself, caught only against repeated K/V.
    CHECK(failing(model, Fault::kv_head_modulo, tokens) == Ids{"c"});
    // Columns normalised: rows no longer sum to 1 (e1), row 0 is not [1, 0, ...] (e2),
    // later queries change earlier ones (d), and one query alone gives 1s (a, b).
    CHECK(failing(model, Fault::softmax_over_queries, tokens) == Ids{"a", "b", "d", "e1", "e2"});
    // Sequences swapped in a batch: only the batch check runs two at once.
    CHECK(failing(model, Fault::batch_rows_swapped, tokens) == Ids{"g"});
}

TEST_CASE("the suite's ids, prefixes and order") {
    const Model<float> model = random_model(tiny_config());
    TinyBackend tiny(model);
    SuiteOptions options;
    options.id_prefix = "x-";
    options.name_prefix = "x_";
    options.what = "X: ";
    options.cache_checks = false;
    std::vector<std::string> ids;
    for (const CheckRecord& r : run_check_suite(tiny, demo_tokens(), options)) {
        ids.push_back(r.id);
        CHECK(r.name.rfind("x_", 0) == 0);
        CHECK(r.compares.rfind("X: ", 0) == 0);
        CHECK(r.passed);
    }
    CHECK(ids == std::vector<std::string>{"x-d", "x-e1", "x-e2", "x-e3", "x-f2", "x-g", "x-h2"});
}

TEST_CASE("the same suite on a checkpoint used in place, with a float32 and a bfloat16 cache") {
    const Model<float> model = random_model(tiny_config());
    const std::vector<std::uint8_t> bytes = hf_safetensors(model, DType::f32);
    const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
    const PretrainedModel pretrained = pretrained_from_hf(model.config, {&view}, "tiny", WeightPrecision::float32);
    for (DType cache : {DType::f32, DType::bf16}) {
        PretrainedBackend backend(pretrained, cache);
        SuiteOptions options;
        options.cache_tolerance = 1e-3;  // the probe's bound: a bf16 cache rounds keys and values once
        std::vector<std::string> failed;
        for (const CheckRecord& r : run_check_suite(backend, demo_tokens(), options))
            if (!r.passed) failed.push_back(r.id + " " + std::to_string(r.max_abs_error));
        CAPTURE(dtype_name(cache));
        CHECK(failed.empty());
    }
}

TEST_CASE("with attention sinks, the suite passes on the tiny model and on its checkpoint used in place; without the sinks' rule e1 and e2 fail") {
    ModelConfig config = tiny_config();
    config.attention_sinks = true;
    const Model<float> model = random_model(config, 2);
    TinyBackend tiny(model), repeated(model, AttentionPath::repeated_kv);
    std::vector<std::string> failed;
    std::vector<CheckRecord> checks = run_check_suite(tiny, demo_tokens());
    checks.push_back(check_backends_agree(tiny, repeated, demo_tokens()));
    for (const CheckRecord& r : checks)
        if (!r.passed) failed.push_back(r.id + " " + std::to_string(r.max_abs_error));
    CHECK(failed.empty());
    CHECK(std::any_of(checks.begin(), checks.end(), [](const CheckRecord& r) { return r.name == "rows_sum_to_one_minus_sink"; }));

    // The rows do give the sink a share: the plain rule fails them.
    PassCapture capture;
    tiny.reset(1);
    tiny.forward(demo_tokens(), &capture);
    for (const CheckRecord& r : check_probabilities(captured_probs(capture), false))
        if (r.id == "e1" || r.id == "e2") CHECK_FALSE(r.passed);

    // Written as a checkpoint (self_attn.sinks, "attention_sinks": true) and used in place.
    const std::vector<std::uint8_t> bytes = hf_safetensors(model, DType::f32);
    const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
    const ModelConfig read = config_from_hf_json(hf_config_json(model.config, DType::f32));
    REQUIRE(read.attention_sinks);
    const PretrainedModel pretrained = pretrained_from_hf(read, {&view}, "sinks", WeightPrecision::float32);
    PretrainedBackend backend(pretrained, DType::f32);
    failed.clear();
    for (const CheckRecord& r : run_check_suite(backend, demo_tokens()))
        if (!r.passed) failed.push_back(r.id + " " + std::to_string(r.max_abs_error));
    CHECK(failed.empty());
    backend.reset(1);
    tiny.reset(1);
    // The same model, its projections read in place ([out, in]): the same logits to float rounding.
    CHECK(max_abs_diff(backend.forward(demo_tokens(), nullptr), tiny.forward(demo_tokens(), nullptr)) < 1e-4);
}

namespace {

// TinyLlama-1.1B's attention layout (22 layers of 32 query heads sharing 4 KV heads:
// 616 pairs that h2 compares) at a width that runs in milliseconds.
ModelConfig tinyllama_heads_at_small_width() {
    ModelConfig c = tinyllama_config();
    c.name = "tinyllama-heads";
    c.vocab_size = 64;
    c.hidden_size = 64;
    c.head_dim = 8;
    c.ffn_size = 64;
    return c;
}

// Query head `copy` given head `source`'s projection in layer `layer`: the two then
// compute the same queries, as an implementation that indexes one query per KV head would.
void share_queries(Model<float>& model, int layer, int source, int copy) {
    const std::size_t dh = std::size_t(model.config.head_dim);
    Matrix<float>& wq = model.weights.layers[std::size_t(layer)].wq;  // [D, Hq * dh]
    xt::view(wq, xt::all(), xt::range(copy * dh, (copy + 1) * dh)) = xt::view(wq, xt::all(), xt::range(source * dh, (source + 1) * dh));
}

}  // namespace

TEST_CASE("h2 compares heads on at least 8 rows: on two random tokens' one row, some pair of TinyLlama's 616 comes within the bound") {
    // Twelve seeds of a correct model: on the one row of two keys that two tokens give,
    // the closest pair of heads comes within 1e-3 for most of them; on the suite's own
    // batch (8 sequences of 2 tokens) no pair does, for any of them.
    const TokenIds two = {{1, 2}};
    int within_on_one_row = 0;
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        const Model<float> model = random_model(tinyllama_heads_at_small_width(), seed);
        TinyBackend backend(model);
        PassCapture capture;
        backend.reset(1);
        backend.forward(two, &capture);
        const CheckRecord on_one_row = check_shared_heads_differ(model.config, captured_probs(capture));
        REQUIRE(std::isfinite(on_one_row.max_abs_error));
        within_on_one_row += on_one_row.passed ? 0 : 1;

        const std::vector<CheckRecord> checks = run_check_suite(backend, two);
        std::vector<std::string> failed;
        for (const CheckRecord& r : checks)
            if (!r.passed) failed.push_back(r.id + " " + std::to_string(r.max_abs_error));
        CAPTURE(seed);
        CHECK(failed.empty());
        const CheckRecord& h2 = find_check(checks, "h2");
        CHECK(h2.max_abs_error > 10 * h2.tolerance);
        CHECK(h2.compares.find("8 sequences of 2 tokens") != std::string::npos);
    }
    CHECK(within_on_one_row >= 6);

    const std::optional<TokenIds> own = shared_heads_batch(two, 64);
    REQUIRE(own);
    CHECK(own->shape(0) * (own->shape(1) - 1) >= shared_heads_rows);
    CHECK(same_bits(TokenIds(xt::view(*own, xt::range(0, 1))), two));  // the first sequence, then its variants
    // Tokens that give 8 rows already are compared as they are, on the suite's own pass.
    CHECK_FALSE(shared_heads_batch(TokenIds({{1, 2, 3, 4, 5, 6, 7, 8, 9}}), 64));
    CHECK_FALSE(shared_heads_batch(TokenIds({{1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}}), 64));
}

TEST_CASE("h2 fails a model whose query heads share their queries, on two tokens as on more") {
    Model<float> model = random_model(tinyllama_heads_at_small_width());
    share_queries(model, 21, 8, 13);  // layer 21, KV head 1's first and sixth query heads
    TinyBackend backend(model);
    for (const TokenIds& tokens : {TokenIds({{1, 2}}), TokenIds({{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}})}) {
        const CheckRecord h2 = find_check(run_check_suite(backend, tokens), "h2");
        CAPTURE(tokens.shape(1));
        CHECK_FALSE(h2.passed);
        CHECK(h2.max_abs_error == 0.0);  // the same queries: the same probabilities, to the bit
    }
}
