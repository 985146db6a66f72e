// The checks the core runs on kernels it cannot call (core/verify/kernel_cases.hpp):
// a kernel that computes the core's attention in fp32 passes every case; one output
// off by 1e-3, a NaN, a hidden cell given weight, a short output and a wrong tile or
// running sum each fail the check named for it.
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "ops/attention.hpp"
#include "host_attention.hpp"
#include "verify/kernel_cases.hpp"

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
    for (TileState s : core_states) states.push_back(s == TileState::skipped ? 2u : 1u);
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
    wrong[5] = wrong[5] == 1u ? 2u : 1u;
    CHECK_FALSE(named(check_tile_record(c, tile_q, tile_k, 0, head, row, wrong, trace), "tiles_as_core").passed);
    std::vector<float> unscaled = trace;
    unscaled[unscaled.size() - 1] *= 1.001f;
    CHECK_FALSE(named(check_tile_record(c, tile_q, tile_k, 0, head, row, states, unscaled), "row_sum_as_core").passed);
    CHECK_THROWS_AS(check_tile_record(kernel_case("blind-row"), 16, 16, 0, 0, 0, states, trace), InputError);
}
