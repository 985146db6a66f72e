// The checks the core runs on kernels it cannot call (core/verify/kernel_cases.hpp):
// a kernel that computes the core's attention in fp32 passes every case; one output
// off by 1e-3, a NaN, a hidden cell given weight, a short output and a wrong tile or
// running sum each fail the check named for it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "ops/attention.hpp"
#include "host_attention.hpp"
#include "verify/kernel_cases.hpp"
#include "verify/online_softmax_steps.hpp"

using namespace anatomy;
using test::HostRun;
using test::host_attention;

namespace {


const CheckRecord& named(const std::vector<CheckRecord>& records, const std::string& name) {
    for (const CheckRecord& r : records)
        if (r.name == name) return r;
    FAIL("no record named " << name);
    return records.front();
}

}  // namespace

TEST_CASE("the kernel cases cover every mask kind, grouping, sinks, a blind row and decode") {
    std::set<MaskKind> kinds;
    bool group8 = false, sinks = false, blind = false, decode = false, offset = false;
    for (const KernelCase& c : kernel_cases()) {
        kinds.insert(c.mask.kind);
        group8 |= c.shape.Hq / c.shape.Hkv == 8 && c.shape.D == 64;
        sinks |= c.sinks;
        blind |= c.blind_row >= 0;
        decode |= c.decode();
        offset |= !c.decode() && c.shape.S > c.shape.T;
        CHECK(c.mask.T == c.shape.T);
        CHECK(c.mask.S == c.shape.S);
        CHECK(&kernel_case(c.id) == &c);
    }
    CHECK(kinds.size() == 7);
    CHECK((group8 && sinks && blind && decode && offset));
    CHECK_THROWS_AS(kernel_case("no-such-case"), InputError);
}

TEST_CASE("a kernel that computes attention in fp32 passes every case; a broken one fails the check named for it") {
    for (const KernelCase& c : kernel_cases()) {
        CAPTURE(c.id);
        const KernelInputs in = kernel_inputs(c);
        const HostRun run = host_attention(c.shape, in);
        for (const CheckRecord& r : check_kernel_output(c, "host", run.out, &run.probs)) {
            CAPTURE(r.name);
            CHECK(r.passed);
        }
        if (c.blind_row >= 0) {
            // The blind row is all zeros, with or without a sink.
            for (std::int64_t d = 0; d < c.shape.D; ++d) CHECK(run.out[std::size_t(c.blind_row * c.shape.D + d)] == 0.0f);
        }
    }
    const KernelCase& c = kernel_case("sliding-window");
    const KernelInputs in = kernel_inputs(c);
    HostRun run = host_attention(c.shape, in);

    std::vector<float> off = run.out;
    off[17] += 1e-3f;
    CHECK_FALSE(named(check_kernel_output(c, "host", off, nullptr), "out_matches_core").passed);
    off = run.out;
    off[3] = std::numeric_limits<float>::quiet_NaN();
    const CheckRecord nan = named(check_kernel_output(c, "host", off, nullptr), "out_matches_core");
    CHECK_FALSE(nan.passed);
    CHECK(std::isinf(nan.max_abs_error));
    off.resize(off.size() - 1);
    CHECK_FALSE(named(check_kernel_output(c, "host", off, nullptr), "out_matches_core").passed);

    // One future cell given weight (row 2, key 3: the window ends at the query).
    std::vector<float> leaked = run.probs;
    leaked[2 * std::size_t(c.shape.S) + 3] = 1e-7f;
    const std::vector<CheckRecord> records = check_kernel_output(c, "host", run.out, &leaked);
    CHECK_FALSE(named(records, "hidden_cells_zero").passed);
    CHECK(named(records, "out_matches_core").passed);
}

TEST_CASE("the tile record is held to the core's tile rule and to the row's running maximum and sum") {
    const KernelCase& c = kernel_case("sink-window-sinks");
    const KernelInputs in = kernel_inputs(c);
    const std::int64_t tile_q = 16, tile_k = 16, head = 3, row = 70;
    std::vector<TileState> core_states;
    const TileCounts counts = classify_tiles(c.mask, tile_q, tile_k, &core_states);
    std::vector<std::uint32_t> states;
    for (TileState s : core_states) states.push_back(kernel_tile_state(s));
    // The row's (m, l) after each key tile, online, in fp32.
    const double scale = 1.0 / std::sqrt(double(c.shape.D));
    std::vector<float> trace;
    float m = -3.40282347e38f, l = 0;
    for (std::int64_t tile = 0; tile < counts.cols; ++tile) {
        for (std::int64_t key = tile * tile_k; key < std::min(c.shape.S, (tile + 1) * tile_k); ++key) {
            if (!mask_allows(c.mask, row, key)) continue;
            double dot = 0;
            for (std::int64_t d = 0; d < c.shape.D; ++d)
                dot += double(in.q[std::size_t((head * c.shape.T + row) * c.shape.D + d)]) *
                       double(in.k[std::size_t(((head / 2) * c.shape.S + key) * c.shape.D + d)]);
            const float score = float(dot * scale);
            const float m_new = std::max(m, score);
            l = l * std::exp(m - m_new) + std::exp(score - m_new);
            m = m_new;
        }
        trace.push_back(m);
        trace.push_back(l);
    }
    for (const CheckRecord& r : check_tile_record(c, tile_q, tile_k, 0, head, row, states, trace)) {
        CAPTURE(r.name);
        CHECK(r.passed);
    }
    std::vector<std::uint32_t> wrong = states;
    wrong[5] = wrong[5] == kKernelTileSkipped ? kKernelTilePartial : kKernelTileSkipped;
    CHECK_FALSE(named(check_tile_record(c, tile_q, tile_k, 0, head, row, wrong, trace), "tiles_as_core").passed);
    // A full tile recorded as computed with the mask is a wrong tile too.
    REQUIRE(counts.full > 0);
    std::vector<std::uint32_t> masked_full = states;
    *std::find(masked_full.begin(), masked_full.end(), kKernelTileFull) = kKernelTilePartial;
    CHECK_FALSE(named(check_tile_record(c, tile_q, tile_k, 0, head, row, masked_full, trace), "tiles_as_core").passed);
    std::vector<float> unscaled = trace;
    unscaled[unscaled.size() - 1] *= 1.001f;
    CHECK_FALSE(named(check_tile_record(c, tile_q, tile_k, 0, head, row, states, unscaled), "row_sum_as_core").passed);
    CHECK_THROWS_AS(check_tile_record(kernel_case("blind-row"), 16, 16, 0, 0, 0, states, trace), InputError);
}

TEST_CASE("a row's online softmax, tile by tile, ends on the plain softmax and the core's attention") {
    for (const char* id : {"sink-window-sinks", "document", "tinyllama-group8"}) {
        CAPTURE(id);
        const KernelCase& c = kernel_case(id);
        const KernelInputs in = kernel_inputs(c);
        const HostRun host = host_attention(c.shape, in);  // fp32, written apart from the core
        const std::int64_t head = c.shape.Hq - 1, row = c.shape.T - 1;
        for (std::int64_t tile_k : {std::int64_t(7), std::int64_t(16), c.shape.S}) {
            const OnlineSoftmaxRow steps = online_softmax_steps(c, in, tile_k, 0, head, row);
            REQUIRE(steps.steps.size() == std::size_t((c.shape.S + tile_k - 1) / tile_k));
            // The last step's acc / l, the sink folded in, against the plain softmax's output.
            const OnlineSoftmaxStep& last = steps.steps.back();
            const double top = std::max(last.m, steps.sink);
            const double rescale = std::exp(last.m - top);
            const double l = last.l * rescale + (std::isinf(steps.sink) ? 0.0 : std::exp(steps.sink - top));
            for (std::int64_t d = 0; d < c.shape.D; ++d) {
                CHECK(last.acc[std::size_t(d)] * rescale / l == doctest::Approx(steps.out[std::size_t(d)]).epsilon(1e-12));
                CHECK(std::abs(steps.out[std::size_t(d)] - host.out[std::size_t(((head * c.shape.T) + row) * c.shape.D + d)]) < 1e-5);
            }
            for (std::int64_t key = 0; key < c.shape.S; ++key)
                CHECK(std::abs(steps.probs[std::size_t(key)] - host.probs[std::size_t(((head * c.shape.T) + row) * c.shape.S + key)]) < 1e-6);
            // m never falls, and a rescale is e^(m before - m after).
            for (std::size_t j = 1; j < steps.steps.size(); ++j) {
                CHECK(steps.steps[j].m >= steps.steps[j - 1].m);
                if (steps.steps[j].visible > 0 && steps.steps[j - 1].l > 0)
                    CHECK(steps.steps[j].rescale == doctest::Approx(std::exp(steps.steps[j - 1].m - steps.steps[j].m)));
            }
        }
    }
    CHECK_THROWS_AS(online_softmax_steps(kernel_case("full"), kernel_inputs(kernel_case("full")), 0, 0, 0, 0), InputError);
    CHECK_THROWS_AS(online_softmax_steps(kernel_case("full"), kernel_inputs(kernel_case("full")), 8, 0, 4, 0), InputError);
}

TEST_CASE("a figure's case is checked on a sample of rows: the fp32 attention passes, one value off fails") {
    MaskSpec mask;
    mask.kind = MaskKind::sliding_window;
    mask.T = 48;
    mask.S = 80;
    mask.window = 20;
    const KernelCase c = figure_case({2, 4, 2, 48, 80, 16}, mask);
    const HostRun run = host_attention(c.shape, kernel_inputs(c));
    const std::vector<float> out(run.out.begin(), run.out.end());
    CHECK(named(check_kernel_sample(c, "host", out, 16), "out_matches_core_sampled").passed);
    // The sample's first and last rows are the output's first and last.
    for (std::size_t at : {std::size_t(0), out.size() - 1}) {
        std::vector<float> off = out;
        off[at] += 1e-3f;
        CHECK_FALSE(check_kernel_sample(c, "host", off, 16).front().passed);
    }
    std::vector<float> nan = out;
    nan[0] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(check_kernel_sample(c, "host", nan, 16).front().passed);
    CHECK_FALSE(check_kernel_sample(c, "host", std::vector<float>(out.size() - 1), 16).front().passed);
    // A mask of another size, or heads that do not divide, are refused.
    CHECK_THROWS_AS(figure_case({1, 4, 2, 48, 81, 16}, mask), InputError);
    CHECK_THROWS_AS(figure_case({1, 3, 2, 48, 80, 16}, mask), InputError);
}
