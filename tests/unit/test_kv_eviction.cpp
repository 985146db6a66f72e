// The KV cache under eviction (core/model/kv_eviction.hpp) and the streamed losses
// (core/stream/stream_losses.hpp): a key turned back by one position is the key
// computed one position earlier; a window as long as the text evicts nothing and
// gives keep_all's bits; sinks and window with no sinks is the sliding window; the
// sinks stay as they were; in a one-layer model (whose keys depend on their own token
// and position only) the sliding window through the cache is recomputing each window;
// the reference computed in parts joins into the whole.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <xtensor/xview.hpp>

#include "model/forward.hpp"
#include "model/kv_eviction.hpp"
#include "model/random_tensor.hpp"
#include "ops/rope.hpp"
#include "stream/stream_losses.hpp"
#include "test_helpers.hpp"

using namespace anatomy;
using namespace anatomy::test;

namespace {

std::vector<std::int32_t> text_ids(std::size_t n, std::int32_t V, std::uint64_t seed) {
    std::vector<std::int32_t> ids(n);
    SplitMix64 random(seed);
    for (std::int32_t& id : ids) id = std::int32_t(random.next_u64() % std::uint64_t(V));
    ids[0] = 0;  // BOS
    return ids;
}

double largest_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
    return worst;
}

}  // namespace

TEST_CASE("a cached key turned back by one position is the key computed one position earlier, to rounding") {
    for (const RopePairing pairing : {RopePairing::half_split, RopePairing::interleaved}) {
        ModelConfig c = tiny_config();
        c.rope_pairing = pairing;
        const Tensor4<double> k = random_tensor<double, 4>({1, 2, 5, 8}, 3);  // five keys before RoPE
        const std::vector<std::int64_t> at{0, 1, 2, 3, 4}, earlier{0, 1, 1, 2, 3};
        const Tensor4<double> rotated = apply_rope(k, at, c.rope_theta, c.rope_pairing);
        const Tensor4<double> expected = apply_rope(k, earlier, c.rope_theta, c.rope_pairing);  // keys 2.. one position back
        const Tensor4<double> back = rotate_back(rotated, 2, 1, c);
        CAPTURE(to_string(pairing));
        CHECK(xt::amax(xt::abs(back - expected))() < 1e-14);
        for (std::size_t s = 0; s < 2; ++s)  // keys before the first moved one are left as they were
            CHECK(xt::view(back, xt::all(), xt::all(), s) == xt::view(rotated, xt::all(), xt::all(), s));
        CHECK(xt::amax(xt::abs(rotate_back(rotated, 2, 0, c) - rotated))() == 0.0);
        CHECK(xt::amax(xt::abs(back - rotated))() > 1e-3);  // a rotation that did nothing would fail the first check
    }
}

TEST_CASE("evicting: each policy keeps what it says, and sets the next position to the entries left") {
    const Model<float> model = random_model(tiny_config(), 8);
    const std::vector<std::int32_t> ids = text_ids(12, 32, 4);
    for (const EvictionPolicy policy : {EvictionPolicy::sliding_window, EvictionPolicy::sinks_and_window}) {
        const EvictionSpec spec{policy, 6, 2};
        KVCache<float> cache = empty_cache<float>(model.config, 1);
        KVCache<float> first_two = empty_cache<float>(model.config, 1);
        std::size_t evicted = 0;
        for (std::size_t t = 0; t < ids.size(); ++t) {
            evicted += evict_for(cache, spec, 1, model.config);
            TokenIds one({1, 1});
            one(0, 0) = ids[t];
            forward(model, cache, one);
            if (t < 2) forward(model, first_two, one);
            CHECK(cache.position <= 6);
            CHECK(cache.keys[1].shape(2) == std::size_t(cache.position));
        }
        CAPTURE(to_string(policy));
        CHECK(evicted == 12 - 6);
        if (policy == EvictionPolicy::sinks_and_window)  // the two sinks: the same bits as when they were first cached
            for (std::size_t l = 0; l < 2; ++l)
                CHECK(xt::view(cache.keys[l], xt::all(), xt::all(), xt::range(0, 2)) == first_two.keys[l]);
    }
    KVCache<float> cache = empty_cache<float>(model.config, 1);
    CHECK(evict_for(cache, EvictionSpec{EvictionPolicy::keep_all, 0, 0}, 1000, model.config) == 0);
    CHECK_THROWS_WITH_AS(require_valid(EvictionSpec{EvictionPolicy::sinks_and_window, 4, 4}),
                         "the sinks K = 4 must be fewer than the window W = 4 (the sinks are kept inside the window)", InputError);
    CHECK_THROWS_AS(evict_for(cache, EvictionSpec{EvictionPolicy::sliding_window, 4, 0}, 5, model.config), InputError);
}

TEST_CASE("streamed losses: a window as long as the text is keep_all, bit for bit; no sinks is the sliding window") {
    const Model<float> model = random_model(tiny_config(), 9);
    const std::vector<std::int32_t> ids = text_ids(40, 32, 5);
    const std::vector<double> all = stream_through_cache(model, ids, {EvictionPolicy::keep_all, 0, 0}).losses;
    REQUIRE(all.size() == 39);
    for (const double loss : all) REQUIRE(std::isfinite(loss));
    // keep_all through the cache is one full pass.
    CHECK(largest_difference(all, stream_recomputed(model, ids, ids.size()).losses) < 1e-5);
    for (const EvictionPolicy policy : {EvictionPolicy::sliding_window, EvictionPolicy::sinks_and_window}) {
        CAPTURE(to_string(policy));
        CHECK(same_bits(stream_through_cache(model, ids, {policy, 40, 4}).losses, all));
        CHECK(same_bits(stream_through_cache(model, ids, {policy, 39, 4}).losses, all));  // 39 tokens are read, 40 never cached
        CHECK_FALSE(same_bits(stream_through_cache(model, ids, {policy, 16, 4}).losses, all));
    }
    CHECK(same_bits(stream_through_cache(model, ids, {EvictionPolicy::sinks_and_window, 12, 0}).losses,
                    stream_through_cache(model, ids, {EvictionPolicy::sliding_window, 12, 0}).losses));
    CHECK_FALSE(same_bits(stream_through_cache(model, ids, {EvictionPolicy::sinks_and_window, 12, 1}).losses,
                          stream_through_cache(model, ids, {EvictionPolicy::sliding_window, 12, 0}).losses));
    CHECK_THROWS_AS(stream_through_cache(model, {0}, {EvictionPolicy::keep_all, 0, 0}), InputError);
    CHECK_THROWS_AS(stream_through_cache(model, {0, 32}, {EvictionPolicy::keep_all, 0, 0}), InputError);
}

TEST_CASE("in a one-layer model the sliding window through the cache is recomputing each window, to rounding") {
    ModelConfig c = tiny_config();
    c.n_layers = 1;
    const Model<float> model = random_model(c, 10);
    const std::vector<std::int32_t> ids = text_ids(48, 32, 6);
    const std::vector<double> cached = stream_through_cache(model, ids, {EvictionPolicy::sliding_window, 10, 0}).losses;
    const std::vector<double> recomputed = stream_recomputed(model, ids, 10).losses;
    CHECK(largest_difference(cached, recomputed) < 1e-4);
    // Two layers: a cached key of layer 1 remembers tokens the window has since dropped, so they differ.
    const Model<float> deeper = random_model(tiny_config(), 10);
    CHECK(largest_difference(stream_through_cache(deeper, ids, {EvictionPolicy::sliding_window, 10, 0}).losses,
                             stream_recomputed(deeper, ids, 10).losses) > 1e-3);
}

TEST_CASE("greedy continuations: a window that never fills is keep_all; no sinks is the sliding window; one layer recomputes") {
    const Model<float> model = random_model(tiny_config(), 11);
    const std::vector<std::int32_t> ids = text_ids(20, 32, 7);
    const std::vector<std::int32_t> all = stream_through_cache(model, ids, {EvictionPolicy::keep_all, 0, 0}, 12).continuation;
    REQUIRE(all.size() == 12);
    for (const std::int32_t id : all) CHECK((id >= 0 && id < 32));
    CHECK(stream_through_cache(model, ids, {EvictionPolicy::sliding_window, 32, 0}, 12).continuation == all);  // 20 + 12 entries fit
    CHECK(stream_recomputed(model, ids, 32, 12).continuation == all);
    CHECK(stream_through_cache(model, ids, {EvictionPolicy::sinks_and_window, 8, 0}, 12).continuation ==
          stream_through_cache(model, ids, {EvictionPolicy::sliding_window, 8, 0}, 12).continuation);
    CHECK(stream_through_cache(model, ids, {EvictionPolicy::keep_all, 0, 0}, 0).continuation.empty());
    ModelConfig one_layer = tiny_config();
    one_layer.n_layers = 1;
    const Model<float> shallow = random_model(one_layer, 11);
    CHECK(stream_through_cache(shallow, ids, {EvictionPolicy::sliding_window, 6, 0}, 12).continuation == stream_recomputed(shallow, ids, 6, 12).continuation);
}

TEST_CASE("the reference in parts (as the page's workers share it out) joins into the whole, bit for bit") {
    const Model<float> model = random_model(tiny_config(), 12);
    const std::vector<std::int32_t> ids = text_ids(30, 32, 9);
    const StreamRun whole = stream_recomputed(model, ids, 8, 5);
    REQUIRE(whole.losses.size() == 29);
    std::vector<double> joined;
    for (const auto& [from, to] : {std::pair{0, 3}, {3, 3}, {3, 17}, {17, 29}}) {
        const std::vector<double> part = recomputed_losses(model, ids, 8, std::size_t(from), std::size_t(to));
        CHECK(part.size() == std::size_t(to - from));
        joined.insert(joined.end(), part.begin(), part.end());
    }
    CHECK(same_bits(joined, whole.losses));
    // A part that starts one prediction late is not the whole.
    std::vector<double> shifted = recomputed_losses(model, ids, 8, 1, 29);
    shifted.insert(shifted.begin(), whole.losses[0]);
    shifted.pop_back();
    CHECK_FALSE(same_bits(shifted, whole.losses));
    CHECK(recomputed_continuation(model, ids, 8, 5) == whole.continuation);
    CHECK(recomputed_continuation(model, ids, 8, 0).empty());
    CHECK_THROWS_AS(recomputed_losses(model, ids, 8, 0, 30), InputError);  // 29 predictions
    CHECK_THROWS_AS(recomputed_losses(model, ids, 8, 5, 4), InputError);
}

TEST_CASE("last_position_logits is full_forward's last row, for any depth and length, with and without sinks") {
    for (int layers : {1, 2, 3})
        for (bool sinks : {false, true}) {
            ModelConfig c = tiny_config();
            c.n_layers = layers;
            c.attention_sinks = sinks;
            const Model<double> model = cast_model<double>(random_model(c, 20 + std::uint64_t(layers)));
            for (std::size_t T : {1, 2, 5, 9}) {
                const std::vector<std::int32_t> ids = text_ids(T, c.vocab_size, 30 + T);
                TokenIds tokens({1, T});
                std::copy(ids.begin(), ids.end(), tokens.begin());
                const Tensor3<double> full = full_forward(model, tokens);         // [1, T, V]
                const Tensor3<double> last = last_position_logits(model, tokens);  // [1, 1, V]
                CAPTURE(layers);
                CAPTURE(sinks);
                CAPTURE(T);
                REQUIRE(last.shape(1) == 1);
                double worst = 0;
                for (std::size_t v = 0; v < std::size_t(c.vocab_size); ++v)
                    worst = std::max(worst, std::abs(last(0, 0, v) - full(0, T - 1, v)));
                CHECK(worst <= 1e-12);
            }
        }
}
