// Mask predicates and FlashAttention tile counts, against a cell-by-cell brute force.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "masks.hpp"
#include "model/random.hpp"
#include "ops/attention.hpp"
#include "tensor.hpp"

using namespace anatomy;

namespace {

// Classify every tile by visiting every cell.
TileCounts brute_force(const MaskSpec& spec, std::int64_t tq, std::int64_t tk) {
    TileCounts c;
    c.rows = (spec.T + tq - 1) / tq;
    c.cols = (spec.S + tk - 1) / tk;
    for (std::int64_t br = 0; br < c.rows; ++br)
        for (std::int64_t bc = 0; bc < c.cols; ++bc) {
            std::int64_t seen = 0, cells = 0;
            for (std::int64_t t = br * tq; t < std::min(spec.T, (br + 1) * tq); ++t)
                for (std::int64_t s = bc * tk; s < std::min(spec.S, (bc + 1) * tk); ++s) {
                    ++cells;
                    seen += mask_allows(spec, t, s);
                }
            c.visible_cells += seen;
            if (seen == 0) ++c.skipped;
            else if (seen == cells) ++c.full;
            else ++c.partial;
        }
    return c;
}

MaskSpec random_spec(SplitMix64& rng) {
    MaskSpec m;
    m.kind = MaskKind(rng.next_u64() % 7);
    m.S = 1 + std::int64_t(rng.next_u64() % 150);
    m.T = 1 + std::int64_t(rng.next_u64() % std::uint64_t(m.S));
    m.window = 1 + std::int64_t(rng.next_u64() % 40);
    m.sinks = std::int64_t(rng.next_u64() % 6);
    m.prefix = std::int64_t(rng.next_u64() % std::uint64_t(m.S + 1));
    m.chunk = 1 + std::int64_t(rng.next_u64() % 50);
    for (std::int64_t left = m.S; left > 0;) {
        const std::int64_t length = std::min(left, 1 + std::int64_t(rng.next_u64() % 40));
        m.document_lengths.push_back(length);
        left -= length;
    }
    return m;
}

}  // namespace

TEST_CASE("the causal mask spec matches the attention op's causal mask, with a cache offset") {
    for (auto [T, S] : {std::pair<std::int64_t, std::int64_t>{5, 5}, {2, 5}, {1, 9}}) {
        MaskSpec spec;
        spec.kind = MaskKind::causal;
        spec.T = T;
        spec.S = S;
        const Mask reference = causal_mask(std::size_t(T), std::size_t(S));
        for (std::int64_t t = 0; t < T; ++t)
            for (std::int64_t s = 0; s < S; ++s) CHECK(mask_allows(spec, t, s) == bool(reference(t, s)));
    }
}

TEST_CASE("mask shapes from their definitions") {
    MaskSpec m;
    m.T = m.S = 10;
    m.kind = MaskKind::sliding_window;
    m.window = 3;
    CHECK(mask_allows(m, 5, 3));
    CHECK_FALSE(mask_allows(m, 5, 2));  // window 3 ends at the query: keys 3, 4, 5
    CHECK_FALSE(mask_allows(m, 5, 6));
    m.kind = MaskKind::sink_window;
    m.sinks = 1;
    CHECK(mask_allows(m, 9, 0));
    CHECK_FALSE(mask_allows(m, 9, 1));
    CHECK(visible_keys(m, 9).size() == 2);
    CHECK(visible_keys(m, 2).size() == 1);  // sink and window touch: one range
    m.kind = MaskKind::prefix_lm;
    m.prefix = 4;
    CHECK(mask_allows(m, 0, 3));  // inside the prefix everything sees everything
    CHECK_FALSE(mask_allows(m, 5, 6));
    m.kind = MaskKind::document;
    m.document_lengths = {3, 4, 3};
    CHECK(mask_allows(m, 6, 3));
    CHECK_FALSE(mask_allows(m, 6, 2));  // key 2 belongs to the first document
    m.kind = MaskKind::chunked;
    m.chunk = 4;
    CHECK(mask_allows(m, 5, 4));
    CHECK_FALSE(mask_allows(m, 5, 3));
}

TEST_CASE("tile counts equal a cell-by-cell count for random masks, sizes and tiles") {
    SplitMix64 rng(2024);
    for (int trial = 0; trial < 400; ++trial) {
        const MaskSpec spec = random_spec(rng);
        const std::int64_t tq = 1 + std::int64_t(rng.next_u64() % 33), tk = 1 + std::int64_t(rng.next_u64() % 33);
        INFO("kind " << mask_kind_name(spec.kind) << " T " << spec.T << " S " << spec.S << " tiles " << tq << "x" << tk);
        const TileCounts fast = classify_tiles(spec, tq, tk), slow = brute_force(spec, tq, tk);
        REQUIRE(fast.skipped == slow.skipped);
        REQUIRE(fast.partial == slow.partial);
        REQUIRE(fast.full == slow.full);
        REQUIRE(fast.visible_cells == slow.visible_cells);
        REQUIRE(fast.skipped_fraction() >= 0.0);
        REQUIRE(fast.skipped_fraction() <= 1.0);
    }
}

TEST_CASE("known tile counts: causal 16k x 16k in 128-tiles skips the strict upper triangle of tiles") {
    MaskSpec m;
    m.kind = MaskKind::causal;
    m.T = m.S = 16384;
    const TileCounts c = classify_tiles(m, 128, 128);
    const std::int64_t n = 128;  // tiles per side
    CHECK(c.partial == n);                  // the diagonal tiles
    CHECK(c.full == n * (n - 1) / 2);       // strictly below
    CHECK(c.skipped == n * (n - 1) / 2);    // strictly above
    CHECK(c.visible_cells == 16384LL * 16385 / 2);
    CHECK(c.skipped_fraction() == doctest::Approx(double(n - 1) / (2 * n)));
}

TEST_CASE("bad mask specs are rejected with a reason") {
    MaskSpec m;
    m.kind = MaskKind::document;
    m.T = m.S = 10;
    m.document_lengths = {3, 3};
    CHECK(mask_problem(m).find("add up to S") != std::string::npos);
    m.kind = MaskKind::causal;
    m.T = 11;
    CHECK_FALSE(mask_problem(m).empty());
    m.T = 10;
    CHECK_THROWS_AS(classify_tiles(m, 0, 16), InputError);
}

TEST_CASE("mask specs from JSON: whole numbers only, clear errors") {
    CHECK(mask_spec_from_json(nlohmann::json::parse(R"({"kind": "causal", "T": 4, "S": 9})")).S == 9);
    CHECK_THROWS_WITH_AS(mask_spec_from_json(nlohmann::json::parse(R"({"kind": "causal", "T": 1.5})")), doctest::Contains("whole number"), InputError);
    CHECK_THROWS_WITH_AS(mask_spec_from_json(nlohmann::json::parse(R"({"kind": "diagonal", "T": 4})")), doctest::Contains("unknown mask kind"), InputError);
    CHECK_THROWS_WITH_AS(mask_spec_from_json(nlohmann::json::parse(R"({"kind": "document", "T": 4, "document_lengths": [2, 2.5]})")),
                         doctest::Contains("whole numbers"), InputError);
}
