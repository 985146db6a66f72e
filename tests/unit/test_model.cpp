// The whole decoder: config, weights, forward paths and the verification checks.
#include <cmath>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include "model/cache_payload.hpp"
#include "model/forward.hpp"
#include "model/token_batch.hpp"
#include "verify/checks.hpp"
#include "verify/compare.hpp"
#include "test_helpers.hpp"

using namespace anatomy;
using namespace anatomy::test;

namespace {


}  // namespace

TEST_CASE("presets carry the published shapes") {
    const ModelConfig tiny = tiny_config();
    CHECK(tiny.vocab_size == 32);
    CHECK(tiny.hidden_size == 32);
    CHECK(tiny.n_layers == 2);
    CHECK(tiny.n_heads == 4);
    CHECK(tiny.n_kv_heads == 2);
    CHECK(tiny.head_dim == 8);
    CHECK(tiny.ffn_size == 96);
    CHECK(tiny.kv_group() == 2);
    CHECK(tiny.rope_pairing == RopePairing::half_split);
    const ModelConfig big = tinyllama_config();
    CHECK(big.n_layers == 22);
    CHECK(big.hidden_size == 2048);
    CHECK(big.n_heads * big.head_dim == big.hidden_size);
    CHECK(config_problem(tiny).empty());
    CHECK(config_from_json(config_to_json(big)).ffn_size == 5632);
}

TEST_CASE("config validation names the problem") {
    ModelConfig c = tiny_config();
    c.n_kv_heads = 3;
    CHECK(config_problem(c).find("multiple of n_kv_heads") != std::string::npos);
    c = tiny_config();
    c.head_dim = 7;
    CHECK(config_problem(c).find("even") != std::string::npos);
    c = tiny_config();
    c.n_layers = 0;
    CHECK_THROWS_AS(require_valid(c), InputError);
}

TEST_CASE("KV cache payload: 2 x layers x KV heads x head dim per token") {
    const CachePayload big = cache_payload(tinyllama_config());
    CHECK(big.scalars_per_token == 11264);
    CHECK(big.bytes_per_token_fp32 == 45056);
    CHECK(big.bytes_per_token_16bit == 22528);
    CHECK(cache_payload(tiny_config()).scalars_per_token == 2 * 2 * 2 * 8);
    CHECK(cache_bytes(tinyllama_config(), 2, 4096, 8) == 22528LL * 4096 * 8);
}

TEST_CASE("weights are deterministic per seed and shaped by the config") {
    const Model<float> a = random_model(tiny_config(), 5), b = random_model(tiny_config(), 5), c = random_model(tiny_config(), 6);
    CHECK(max_abs_diff(a.weights.layers[1].wq, b.weights.layers[1].wq) == 0.0);
    CHECK(max_abs_diff(a.weights.embedding, c.weights.embedding) > 0.1);
    CHECK_NOTHROW(require_shapes(a.config, a.weights));
    CHECK(a.weights.layers[0].wk.shape() == std::array<std::size_t, 2>{32, 16});
    CHECK(a.weights.lm_head.size() == 0);  // tied: no separate head
    // Projections are N(0, 1/in): the sample std of wq (32 x 32) is near 1/sqrt(32).
    const double std = std::sqrt(double(xt::mean(xt::square(a.weights.layers[0].wq))()));
    CHECK(std == doctest::Approx(1.0 / std::sqrt(32.0)).epsilon(0.1));
}

TEST_CASE("forward: logits have shape [B, T, V], the position counter advances, bad input leaves the cache alone") {
    const Model<float> model = random_model(tiny_config());
    KVCache<float> cache = empty_cache<float>(model.config, 2);
    const TokenIds tokens = {{1, 2, 3}, {4, 5, 6}};
    const Tensor3<float> logits = forward(model, cache, tokens);
    CHECK(logits.shape() == std::array<std::size_t, 3>{2, 3, 32});
    CHECK(cache.position == 3);
    CHECK(cache.keys[1].shape() == std::array<std::size_t, 4>{2, 2, 3, 8});

    CHECK_THROWS_AS(forward(model, cache, TokenIds({{1}, {32}})), InputError);
    CHECK_THROWS_AS(forward(model, cache, TokenIds({{1}})), InputError);  // batch of 1 vs cache of 2
    CHECK(cache.position == 3);
    CHECK(cache.keys[0].shape(2) == 3);
    forward(model, cache, TokenIds({{7}, {8}}));
    CHECK(cache.position == 4);
}

TEST_CASE("captured probabilities match the seed's figures: row 0 is [1, 0, ...], columns past t are 0") {
    const Model<float> model = random_model(tiny_config());
    ForwardCapture<float> capture;
    full_forward(model, TokenIds({{1, 2, 3, 4, 5, 6}}), AttentionPath::grouped, &capture);
    REQUIRE(capture.layers.size() == 2);
    const Tensor4<float>& p = capture.layers[1].probs;  // [1, 4, 6, 6]
    CHECK(p.shape() == std::array<std::size_t, 4>{1, 4, 6, 6});
    for (std::size_t h = 0; h < 4; ++h) {
        CHECK(p(0, h, 0, 0) == 1.0f);
        for (std::size_t s = 3; s < 6; ++s) CHECK(p(0, h, 2, s) == 0.0f);  // query 2 sees only 0, 1, 2
    }
    CHECK(capture.positions == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("cached decode positions continue from the history") {
    const Model<float> model = random_model(tiny_config());
    KVCache<float> cache = empty_cache<float>(model.config, 1);
    forward(model, cache, TokenIds({{1, 2, 3}}));
    ForwardCapture<float> capture;
    forward(model, cache, TokenIds({{4, 5}}), AttentionPath::grouped, &capture);
    CHECK(capture.positions == std::vector<std::int64_t>{3, 4});
    CHECK(capture.layers[0].probs.shape() == std::array<std::size_t, 4>{1, 4, 2, 5});
    CHECK(capture.layers[0].probs(0, 0, 0, 4) == 0.0f);  // query at 3 cannot see key 4
    CHECK(capture.layers[0].probs(0, 0, 1, 4) > 0.0f);
}

TEST_CASE("float and double forwards agree (the fp32 core against an fp64 reference)") {
    const Model<float> model = random_model(tiny_config());
    const Model<double> model64 = cast_model<double>(model);
    const TokenIds tokens = {{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}};
    const Tensor3<float> logits = full_forward(model, tokens);
    const Tensor3<double> logits64 = full_forward(model64, tokens);
    // fp32 carries ~6e-8 relative error per step over a few hundred steps of O(10) values.
    CHECK(max_abs_diff(xt::cast<double>(logits), logits64) < 1e-4);
}

TEST_CASE("every verification check passes for several token lists and batch sizes") {
    const Model<float> model = random_model(tiny_config());
    for (const TokenIds& tokens : {TokenIds({{1, 2}}), TokenIds({{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}}),
                                   TokenIds(xt::view(xt::arange<std::int32_t>(0, 96) % 32, xt::newaxis(), xt::range(0, 32)))}) {
        const std::vector<CheckRecord> checks = run_checks(model, tokens);
        CHECK(checks.size() == 12);
        for (const CheckRecord& c : checks) {
            INFO(c.id << " " << c.name << " error " << c.max_abs_error);
            CHECK(c.passed);
        }
        CHECK(find_check(checks, "a").max_abs_error == 0.0);  // same arithmetic, same order: exact
    }
    CHECK_THROWS_AS(run_checks(model, TokenIds({{1}})), InputError);
}

TEST_CASE("checks fail when what they guard is broken") {
    // Give query head 1 the same projection as head 0 (they share KV head 0):
    // their distributions become identical and check h2 must fail.
    Model<float> model = random_model(tiny_config());
    for (Matrix<float>* wq : {&model.weights.layers[0].wq, &model.weights.layers[1].wq})
        xt::view(*wq, xt::all(), xt::range(8, 16)) = xt::view(*wq, xt::all(), xt::range(0, 8));
    const std::vector<CheckRecord> checks = run_checks(model, TokenIds({{1, 2, 3, 4}}));
    CHECK_FALSE(find_check(checks, "h2").passed);
    CHECK(find_check(checks, "a").passed);
    CHECK_FALSE(all_passed(checks));
}

TEST_CASE("the interleaved pairing computes a different model") {
    ModelConfig interleaved = tiny_config();
    interleaved.rope_pairing = RopePairing::interleaved;
    const Model<float> a = random_model(tiny_config()), b = random_model(interleaved);
    const TokenIds tokens = {{1, 2, 3, 4}};
    // Same weights, other pairing: position 0 agrees (no rotation), later positions do not.
    const Tensor3<float> la = full_forward(a, tokens), lb = full_forward(b, tokens);
    CHECK(max_abs_diff(xt::view(la, 0, 0), xt::view(lb, 0, 0)) == 0.0);
    CHECK(max_abs_diff(la, lb) > 1e-3);
    for (const CheckRecord& c : run_checks(b, tokens)) CHECK(c.passed);
}

TEST_CASE("the inputs of checks d and g: later tokens all changed, a second sequence of its own") {
    const int V = 32;
    const TokenIds tokens = make_batch({1, 5, 9, 31, 0, 7}, 1, V);  // [1, 6]
    for (std::size_t t = 0; t < 6; ++t) {
        const TokenIds changed = tokens_changed_after(tokens, t, V);
        for (std::size_t s = 0; s < 6; ++s) {
            CHECK(changed(0, s) >= 0);
            CHECK(changed(0, s) < V);
            if (s <= t) CHECK(changed(0, s) == tokens(0, s));
            else CHECK(changed(0, s) != tokens(0, s));
        }
    }
    const TokenIds batch = batch_of_two_or_more(tokens, V);
    REQUIRE(batch.shape(0) == 2);
    int differing = 0;
    for (std::size_t s = 0; s < 6; ++s) {
        CHECK(batch(0, s) == tokens(0, s));
        CHECK(batch(1, s) == (tokens(0, s) * 7 + 3 + int(s)) % V);
        differing += batch(1, s) != tokens(0, s);
    }
    CHECK(differing == 5);  // 31 * 7 + 3 + 3 = 223 = 31 mod 32: position 3 happens to agree
    const TokenIds two = make_batch({1, 2, 3, 4}, 2, V);  // already a batch of 2: used as it is
    CHECK(batch_of_two_or_more(two, V) == two);
}
