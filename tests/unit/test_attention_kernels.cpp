// The fast attention kernels (v1 rows, v2 grouped, v3 streaming) against the
// core's reference attention, and the bench's validation rule.
//
// Tolerance, the harness's one rule with the CPU's floor (core/bench/harness.hpp):
// a kernel's max |error| against the fp64 reference may be at most twice the fp32
// reference's own max |error| on the same inputs, plus 1e-6 (about 8 ulp at 1.0)
// for outputs the fp32 reference gets exactly right. The kernels sum in another
// order and use fused multiply-add where the machine has it, so they are not
// bit-identical to the reference, but no less accurate.
#include <cmath>
#include <limits>

#include <doctest/doctest.h>
#include <xtensor/xview.hpp>

#include "bench/attention_bench.hpp"
#include "bench/attention_check.hpp"
#include "bench/harness.hpp"
#include "model/random_tensor.hpp"
#include "ops/attention_kernels.hpp"

using namespace anatomy;

namespace {

double max_error(const Tensor4<float>& got, const Tensor4<double>& exact) {
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!std::isfinite(got.data()[i])) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, std::abs(double(got.data()[i]) - exact.data()[i]));
    }
    return worst;
}

struct Case {
    std::size_t B, Hq, Hkv, T, S, dh;
};

// Small odd shapes: batches of 2 and 3, a cache offset (T < S), single-token
// decode (T = 1), head sizes that are not powers of two (or multiples of a
// vector), S not a multiple of a key block, GQA groups 1, 2, 4 and 8. A KV
// head read by a single register tile of rows (decode, short T: at most 8 rows
// with AVX-512, 4 with 128-bit vectors) takes the kernels' in-place K path;
// more rows take the packed-panel path.
const Case cases[] = {
    {2, 4, 2, 5, 9, 12},   // group 2, history 4, dh 12
    {2, 4, 1, 1, 7, 20},   // group 4, decode over 7 keys
    {1, 3, 3, 7, 7, 5},    // group 1 (multi-head), dh 5
    {3, 8, 2, 6, 37, 24},  // group 4, history 31
    {2, 6, 3, 33, 70, 64}, // group 2, S 70 (not a multiple of 16 or 32)
    {2, 8, 1, 1, 45, 40},  // group 8, decode over 45 keys
    {1, 8, 2, 17, 17, 36}, // group 4, prefill, dh 36
    {2, 2, 2, 9, 50, 7},   // group 1, dh 7, history 41
    {1, 8, 1, 1, 603, 16}, // group 8, decode over 603 keys (several streaming key blocks, a partial last one)
    {1, 4, 2, 3, 301, 8},  // group 2, 3 new tokens over a 298-token cache
};

}  // namespace

TEST_CASE("every kernel equals the reference attention within twice the fp32 reference's error") {
    using Kernel = Tensor4<float> (*)(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&);
    const std::pair<const char*, Kernel> kernels[] = {
        {"rows", attention_rows}, {"grouped", attention_grouped}, {"streaming", attention_streaming}};
    std::uint64_t seed = 10;
    for (const Case& c : cases) {
        const Tensor4<float> q = random_tensor<float, 4>({c.B, c.Hq, c.T, c.dh}, seed++, 2.0);  // sharper softmax rows
        const Tensor4<float> k = random_tensor<float, 4>({c.B, c.Hkv, c.S, c.dh}, seed++);
        const Tensor4<float> v = random_tensor<float, 4>({c.B, c.Hkv, c.S, c.dh}, seed++);
        const Tensor4<double> exact = attention_reference(Tensor4<double>(xt::cast<double>(q)),
                                                          Tensor4<double>(xt::cast<double>(k)),
                                                          Tensor4<double>(xt::cast<double>(v)));
        const double reference_error = max_error(attention_reference(q, k, v), exact);
        const double tolerance = attention_tolerance(reference_error, kCpuToleranceFloor);
        for (const auto& named_kernel : kernels) {
            const char* name = named_kernel.first;
            const Kernel kernel = named_kernel.second;
            INFO(name, " B=", c.B, " Hq=", c.Hq, " Hkv=", c.Hkv, " T=", c.T, " S=", c.S, " dh=", c.dh);
            const Tensor4<float> out = kernel(q, k, v);
            REQUIRE(out.shape() == std::array<std::size_t, 4>{c.B, c.Hq, c.T, c.dh});
            CHECK(max_error(out, exact) <= tolerance);
        }
        // The repeated-K/V reference is the grouped reference with copies: bit for bit.
        const Tensor4<float> grouped = attention_reference(q, k, v), repeated = attention_reference(q, k, v, true);
        CHECK(std::equal(grouped.begin(), grouped.end(), repeated.begin()));
    }
}

TEST_CASE("decode over a cache equals the last row of recomputing the whole prefix") {
    // One new token attending to S cached keys is row S - 1 of prefill attention over S tokens.
    const std::size_t B = 2, Hq = 8, Hkv = 2, S = 29, dh = 20;
    const Tensor4<float> q_all = random_tensor<float, 4>({B, Hq, S, dh}, 1);
    const Tensor4<float> k = random_tensor<float, 4>({B, Hkv, S, dh}, 2), v = random_tensor<float, 4>({B, Hkv, S, dh}, 3);
    const Tensor4<float> q_last = xt::view(q_all, xt::all(), xt::all(), xt::range(S - 1, S), xt::all());
    for (auto kernel : {attention_grouped, attention_streaming, attention_rows}) {
        const Tensor4<float> decode = kernel(q_last, k, v);  // [B, Hq, 1, dh]
        const Tensor4<float> prefill = kernel(q_all, k, v);  // [B, Hq, S, dh]
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < Hq; ++h)
                for (std::size_t d = 0; d < dh; ++d) CHECK(decode(b, h, 0, d) == doctest::Approx(prefill(b, h, S - 1, d)).epsilon(1e-5));
    }
}

TEST_CASE("future keys do not leak: changing keys after position t leaves row t unchanged, bit for bit") {
    const std::size_t B = 1, Hq = 4, Hkv = 2, T = 40, dh = 16;
    const Tensor4<float> q = random_tensor<float, 4>({B, Hq, T, dh}, 4);
    Tensor4<float> k = random_tensor<float, 4>({B, Hkv, T, dh}, 5), v = random_tensor<float, 4>({B, Hkv, T, dh}, 6);
    for (auto kernel : {attention_grouped, attention_streaming, attention_rows}) {
        const Tensor4<float> before = kernel(q, k, v);
        Tensor4<float> k2 = k, v2 = v;
        for (std::size_t s = 20; s < T; ++s)
            for (std::size_t d = 0; d < dh; ++d) k2(0, 0, s, d) += 100, v2(0, 1, s, d) -= 100;
        const Tensor4<float> after = kernel(q, k2, v2);
        for (std::size_t h = 0; h < Hq; ++h)
            for (std::size_t t = 0; t < 20; ++t)
                for (std::size_t d = 0; d < dh; ++d) CHECK(before(0, h, t, d) == after(0, h, t, d));
    }
}

TEST_CASE("kernels reject inconsistent shapes with a message") {
    const Tensor4<float> q = random_tensor<float, 4>({1, 4, 3, 8}, 1), k = random_tensor<float, 4>({1, 3, 5, 8}, 2);
    CHECK_THROWS_AS(attention_grouped(q, k, k), InputError);                             // 4 heads over 3 KV heads
    const Tensor4<float> k2 = random_tensor<float, 4>({1, 2, 2, 8}, 3);
    CHECK_THROWS_AS(attention_streaming(q, k2, k2), InputError);                         // fewer keys than queries
    CHECK_THROWS_AS(attention_rows(q, random_tensor<float, 4>({1, 2, 5, 8}, 4), random_tensor<float, 4>({1, 2, 5, 6}, 5)), InputError);
}

TEST_CASE("the bench's row validation passes a kernel and fails a wrong, shifted or NaN output") {
    const Tensor4<float> q = random_tensor<float, 4>({2, 4, 50, 12}, 7), k = random_tensor<float, 4>({2, 2, 60, 12}, 8),
                         v = random_tensor<float, 4>({2, 2, 60, 12}, 9);
    const ReferenceRows reference = reference_rows(q, k, v);
    CHECK(reference.rows.size() == 16);
    CHECK(reference.rows.front() == 0);
    CHECK(reference.rows.back() == 49);
    const Validation good = validate_rows(attention_streaming(q, k, v), reference);
    CHECK(good.passed);
    CHECK(good.rows_checked == 16);
    CHECK(good.tolerance == doctest::Approx(2 * reference.fp32_error + 1e-6));

    Tensor4<float> wrong = attention_grouped(q, k, v);
    wrong(1, 3, 49, 11) += 1e-4f;  // one element of a sampled row
    CHECK_FALSE(validate_rows(wrong, reference).passed);
    Tensor4<float> nan = attention_grouped(q, k, v);
    nan(0, 0, 0, 0) = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(validate_rows(nan, reference).passed);
    // An output computed from wrong values (v halved) fails.
    CHECK_FALSE(validate_rows(attention_grouped(q, k, Tensor4<float>(v * 0.5f)), reference).passed);
}

TEST_CASE("bench options from JSON: quick preset, overrides, and errors that name the key") {
    const BenchOptions quick = bench_options_from_json({{"quick", true}, {"decode_S", {9}}});
    CHECK(quick.heads == quick_bench_options().heads);
    CHECK(quick.decode_S == std::vector<std::size_t>{9});
    CHECK_THROWS_WITH_AS(bench_options_from_json({{"T", 3}}), doctest::Contains("unknown bench option 'T'"), InputError);
    CHECK_THROWS_WITH_AS(bench_options_from_json({{"kernels", {"fast"}}}), doctest::Contains("fast"), InputError);
    CHECK_THROWS_WITH_AS(bench_options_from_json({{"heads", 6}, {"kv_heads", 4}}), doctest::Contains("multiple"), InputError);
    CHECK_THROWS_AS(bench_options_from_json({{"prefill_T", {0}}}), InputError);
    CHECK_THROWS_WITH_AS(bench_options_from_json({{"recompute", 1}}), doctest::Contains("recompute must be true or false"), InputError);
    // Each decode case comes with its recompute case unless "recompute": false.
    const auto cases = [](bool recompute) {
        const nlohmann::json report = run_attention_bench(bench_options_from_json(
            {{"quick", true}, {"prefill_T", nlohmann::json::array()}, {"decode_S", {9}}, {"kernels", {"streaming"}},
             {"model", false}, {"min_runs", 1}, {"max_runs", 1}, {"warmup", 0}, {"recompute", recompute}}));
        std::vector<std::string> names;
        for (const nlohmann::json& row : report.at("rows")) names.push_back(row.at("case").get<std::string>());
        return names;
    };
    CHECK(cases(true) == std::vector<std::string>{"ceiling", "decode", "recompute"});
    CHECK(cases(false) == std::vector<std::string>{"ceiling", "decode"});
}
