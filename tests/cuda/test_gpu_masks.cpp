// The GPU kernels' mask predicates (native/cuda/attention_mask.hpp) against the
// core's definition (core/masks.cpp): every cell, and every tile's skip and
// all-visible verdicts, for each kind the kernels implement. Host code only:
// this test runs on machines without a GPU.
#include <doctest/doctest.h>

#include <vector>

#include "cuda/attention_mask_spec.hpp"
#include "tensor.hpp"

using namespace anatomy;
using namespace anatomy::gpu;

namespace {

std::vector<MaskSpec> specs_for(std::int64_t T, std::int64_t S) {
    std::vector<MaskSpec> specs;
    for (MaskKind kind : {MaskKind::full, MaskKind::causal}) specs.push_back({kind, T, S});
    for (std::int64_t window : {1, 5, 33}) {
        MaskSpec sliding{MaskKind::sliding_window, T, S};
        sliding.window = window;
        specs.push_back(sliding);
        for (std::int64_t sinks : {0, 1, 4, 40}) {
            MaskSpec sink{MaskKind::sink_window, T, S};
            sink.window = window;
            sink.sinks = sinks;
            specs.push_back(sink);
        }
    }
    return specs;
}

}  // namespace

TEST_CASE("every cell: mask_visible agrees with the core's mask_allows") {
    for (auto [T, S] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {1, 70}, {13, 13}, {20, 77}, {77, 127}})
        for (const MaskSpec& spec : specs_for(T, S)) {
            const GpuMask mask = gpu_mask_from_spec(spec);
            for (std::int64_t t = 0; t < T; ++t)
                for (std::int64_t s = 0; s < S; ++s)
                    REQUIRE_MESSAGE(mask_visible(mask, mask.history + t, s) == mask_allows(spec, t, s),
                                    mask_kind_name(spec.kind) << " T " << T << " S " << S << " t " << t << " s " << s);
        }
}

TEST_CASE("every tile: skipped exactly when no cell is visible; all-visible never claims a hidden cell") {
    for (auto [T, S] : {std::pair<std::int64_t, std::int64_t>{13, 13}, {77, 127}, {100, 300}})
        for (const MaskSpec& spec : specs_for(T, S))
            for (auto [tile_q, tile_k] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {16, 16}, {64, 32}, {64, 64}}) {
                const GpuMask mask = gpu_mask_from_spec(spec);
                std::int64_t skipped = 0;
                for (std::int64_t t0 = 0; t0 < T; t0 += tile_q)
                    for (std::int64_t s0 = 0; s0 < S; s0 += tile_k) {
                        const std::int64_t t1 = std::min(T, t0 + tile_q) - 1, s1 = std::min(S, s0 + tile_k) - 1;
                        bool any = false, all = true;
                        for (std::int64_t t = t0; t <= t1; ++t)
                            for (std::int64_t s = s0; s <= s1; ++s) {
                                const bool allowed = mask_allows(spec, t, s);
                                any = any || allowed;
                                all = all && allowed;
                            }
                        const long long q0 = mask.history + t0, q1 = mask.history + t1;
                        const bool skip = tile_skipped(mask, q0, q1, s0, s1);
                        const bool full = tile_all_visible(mask, q0, q1, s0, s1);
                        INFO(mask_kind_name(spec.kind) << " window " << spec.window << " sinks " << spec.sinks << " T "
                                                       << T << " S " << S << " tile (" << t0 << ", " << s0 << ")");
                        CHECK(skip == !any);              // never skips a visible cell, never loads an empty tile
                        if (full) CHECK(all);             // the per-cell predicate may only be dropped when safe
                        if (spec.kind != MaskKind::sink_window) CHECK(full == all);  // exact except sink_window
                        skipped += skip ? 1 : 0;
                    }
                CHECK(skipped == classify_tiles(spec, tile_q, tile_k).skipped);  // the page's tile counts agree
            }
}

TEST_CASE("kinds the kernels do not implement are refused with a message") {
    MaskSpec prefix{MaskKind::prefix_lm, 4, 8};
    prefix.prefix = 2;
    CHECK_THROWS_AS(gpu_mask_from_spec(prefix), InputError);
}
