// Head patterns (core/lessons/head_patterns.hpp) on probabilities built by hand,
// where each score is known in closed form, and on a real pass; the KV cache's rewind.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "checkpoint/hf_llama.hpp"
#include "lessons/head_patterns.hpp"
#include "pretrained/pretrained_backend.hpp"
#include "verify/check_suite.hpp"

using namespace anatomy;

namespace {

// One layer [1, H, T, T] whose head h puts all of row t on key(h, t) (a causal key).
template <typename Key>
std::vector<Tensor4<float>> one_hot_heads(std::size_t H, std::size_t T, Key key) {
    Tensor4<float> p = xt::zeros<float>({std::size_t(1), H, T, T});
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t t = 0; t < T; ++t) p(0, h, t, key(h, t)) = 1;
    return {p};
}

// One layer, one head spreading every row evenly over keys 0..t.
std::vector<Tensor4<float>> uniform_head(std::size_t T) {
    Tensor4<float> p = xt::zeros<float>({std::size_t(1), std::size_t(1), T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t s = 0; s <= t; ++s) p(0, 0, t, s) = float(1.0 / double(t + 1));
    return {p};
}

TokenIds one_row(const std::vector<std::int32_t>& ids) {
    TokenIds tokens({1, ids.size()});
    std::copy(ids.begin(), ids.end(), tokens.begin());
    return tokens;
}

}  // namespace

TEST_CASE("each pattern scores 1 on the head that does exactly it and 0 on the others") {
    const std::size_t T = 10;
    // head 0 reads the previous token, head 1 itself, head 2 the first token (row 0 reads itself everywhere).
    const auto probs = one_hot_heads(3, T, [](std::size_t h, std::size_t t) {
        if (t == 0) return std::size_t(0);
        return h == 0 ? t - 1 : h == 1 ? t : std::size_t(0);
    });
    const PatternScores previous = previous_token_scores(probs), self = self_scores(probs), first = first_token_scores(probs);
    CHECK(previous.heads[0] == std::vector<double>{1, 0, 1.0 / 9});  // head 2's row 1 reads key 0 = t - 1
    CHECK(self.heads[0] == std::vector<double>{0, 1, 0});
    CHECK(first.heads[0] == std::vector<double>{0, 0, 1});          // queries 5..9: none reads key 0 but head 2
    CHECK(previous.name == "previous_token");
    CHECK(first.name == "first_token");
}

TEST_CASE("a head that spreads evenly scores the uniform baseline") {
    const std::size_t T = 12;
    const auto probs = uniform_head(T);
    for (const PatternScores& s : {previous_token_scores(probs), self_scores(probs), first_token_scores(probs)}) {
        CAPTURE(s.name);
        CHECK(s.heads[0][0] == doctest::Approx(s.uniform_baseline).epsilon(1e-6));
    }
    // Closed form: queries 1..11 for previous-token, 6..11 for first-token.
    double previous = 0, first = 0;
    for (std::size_t t = 1; t < T; ++t) previous += 1.0 / double(t + 1);
    for (std::size_t t = T / 2; t < T; ++t) first += 1.0 / double(t + 1);
    CHECK(previous_token_scores(probs).uniform_baseline == doctest::Approx(previous / 11).epsilon(1e-12));
    CHECK(first_token_scores(probs).uniform_baseline == doctest::Approx(first / 6).epsilon(1e-12));
}

TEST_CASE("the induction score reads the key after the earlier occurrence, and only in the second copy") {
    const std::size_t R = 5, T = 2 * R + 1;
    // head 0: induction (second copy reads t - R + 1); head 1: reads the earlier occurrence itself (t - R),
    // a duplicate-token head; head 2: induction one key too far (t - R + 2).
    const auto probs = one_hot_heads(3, T, [&](std::size_t h, std::size_t t) {
        if (t <= R) return std::size_t(0);
        return h == 0 ? t - R + 1 : h == 1 ? t - R : std::min(t, t - R + 2);
    });
    CHECK(induction_scores(probs, R).heads[0] == std::vector<double>{1, 0, 0});
    CHECK_THROWS_AS(induction_scores(probs, R + 1), InputError);  // a pass of another length
}

TEST_CASE("the induction ids: BOS, R distinct ids from the range, the same R again; seeded") {
    const std::vector<std::int32_t> ids = repeated_random_ids(1, 259, 512, 32, 7);
    REQUIRE(ids.size() == 65);
    CHECK(ids[0] == 1);
    const std::set<std::int32_t> first(ids.begin() + 1, ids.begin() + 33);
    CHECK(first.size() == 32);
    for (std::int32_t id : first) CHECK((id >= 259 && id < 512));
    CHECK(std::vector<std::int32_t>(ids.begin() + 1, ids.begin() + 33) == std::vector<std::int32_t>(ids.begin() + 33, ids.end()));
    CHECK(repeated_random_ids(1, 259, 512, 32, 7) == ids);
    CHECK(repeated_random_ids(1, 259, 512, 32, 8) != ids);
    CHECK_THROWS_AS(repeated_random_ids(1, 3, 20, 32, 7), InputError);  // 17 ids cannot give 32 distinct ones
    CHECK(first_ordinary_id(512) == 259);
    CHECK(first_ordinary_id(32) == 3);
}

TEST_CASE("head patterns on a model: the scores of its own passes, whatever the cache held before") {
    const Model<float> model = random_model(tiny_config());
    TinyBackend backend(model);
    const std::vector<std::int32_t> text = {1, 5, 9, 2, 7, 7, 3, 11};
    const HeadPatterns patterns = head_patterns(backend, text, 1, 8, 3);
    REQUIRE(patterns.patterns.size() == 4);
    backend.reset(1);
    PassCapture capture;
    backend.forward(one_row(text), &capture);
    CHECK(patterns.patterns[0].heads == previous_token_scores(captured_probs(capture)).heads);
    CHECK(patterns.induction_ids == repeated_random_ids(1, first_ordinary_id(32), 32, 8, 3));
    for (const PatternScores& s : patterns.patterns)
        for (const auto& layer : s.heads) {
            CHECK(layer.size() == 4);
            for (double score : layer) CHECK((score >= 0 && score <= 1));
        }
    CHECK_THROWS_AS(head_patterns(backend, {1}, 1), InputError);
}

TEST_CASE("the induction score over several strings is the mean of each string's score, seeds counting up") {
    const Model<float> model = random_model(tiny_config());
    TinyBackend backend(model);
    const std::vector<std::int32_t> text = {1, 5, 9, 2, 7};
    const HeadPatterns three = head_patterns(backend, text, 1, 6, 4, -1, 3);
    CHECK(three.induction_strings == 3);
    CHECK(three.induction_ids == repeated_random_ids(1, first_ordinary_id(32), 32, 6, 4));  // the first string's
    const std::vector<std::vector<double>> first = head_patterns(backend, text, 1, 6, 4).patterns[3].heads;
    std::vector<std::vector<double>> mean = first;
    for (std::uint64_t seed : {5, 6}) {
        const std::vector<std::vector<double>> one = head_patterns(backend, text, 1, 6, seed).patterns[3].heads;
        for (std::size_t l = 0; l < mean.size(); ++l)
            for (std::size_t h = 0; h < mean[l].size(); ++h) mean[l][h] += one[l][h];
    }
    bool moved = false;  // the strings differ, so a mean of one string repeated would not pass
    for (std::size_t l = 0; l < mean.size(); ++l)
        for (std::size_t h = 0; h < mean[l].size(); ++h) {
            CHECK(three.patterns[3].heads[l][h] == doctest::Approx(mean[l][h] / 3).epsilon(1e-12));
            moved = moved || std::abs(three.patterns[3].heads[l][h] - first[l][h]) > 1e-6;
        }
    CHECK(moved);
    // The other patterns do not depend on the strings.
    CHECK(three.patterns[0].heads == head_patterns(backend, text, 1, 6, 4).patterns[0].heads);
    CHECK_THROWS_AS(head_patterns(backend, text, 1, 6, 4, -1, 0), InputError);
}

TEST_CASE("a rewound cache continues as if the cut tokens had never been run") {
    const Model<float> model = random_model(tiny_config());
    const std::vector<std::uint8_t> bytes = hf_safetensors(model, DType::f32);
    const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
    const PretrainedModel pretrained = pretrained_from_hf(model.config, {&view}, "tiny", WeightPrecision::float32);
    PretrainedBackend straight(pretrained, DType::f32), rewound(pretrained, DType::f32);
    const Tensor3<float> expected = straight.forward(one_row({1, 4, 9, 16, 25}), nullptr);  // [1, 5, V]

    rewound.forward(one_row({1, 4, 9, 30, 31, 2}), nullptr);
    rewound.rewind(3);
    CHECK(rewound.cached_tokens() == 3);
    CHECK(rewound.cache_bytes() == straight.cache_bytes() / 5 * 3);
    const Tensor3<float> tail = rewound.forward(one_row({16, 25}), nullptr);  // [1, 2, V]
    for (std::size_t v = 0; v < tail.shape(2); ++v) {
        CHECK(tail(0, 0, v) == expected(0, 3, v));
        CHECK(tail(0, 1, v) == expected(0, 4, v));
    }
    CHECK_THROWS_AS(rewound.rewind(6), InputError);
    CHECK_THROWS_AS(rewound.rewind(-1), InputError);
}
