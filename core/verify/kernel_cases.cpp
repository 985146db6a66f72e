#include "kernel_cases.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <xtensor/xadapt.hpp>

#include "../bench/harness.hpp"
#include "../model/random.hpp"
#include "../ops/attention.hpp"
#include "compare.hpp"
#include "online_softmax_steps.hpp"

namespace anatomy {
namespace {

MaskSpec mask_of(MaskKind kind, std::int64_t T, std::int64_t S) {
    MaskSpec spec;
    spec.kind = kind;
    spec.T = T;
    spec.S = S;
    return spec;
}

KernelCase make_case(std::string id, std::string what, KernelShape shape, MaskSpec mask, bool sinks = false,
                     std::int64_t blind_row = -1) {
    KernelCase c;
    c.id = std::move(id);
    c.what = std::move(what);
    c.shape = shape;
    c.mask = std::move(mask);
    c.sinks = sinks;
    c.blind_row = blind_row;
    c.seed = 1000 + std::uint64_t(c.id.size()) * 131 + std::uint64_t(shape.T * 7 + shape.S);
    return c;
}

std::vector<KernelCase> make_cases() {
    std::vector<KernelCase> cases;
    const auto add = [&](KernelCase c) {
        require_valid(c.mask);
        cases.push_back(std::move(c));
    };
    // The tiny preset: B 2, Hq 4 sharing 2 KV heads, head size 8.
    add(make_case("tiny-causal", "the tiny preset, causal", {2, 4, 2, 6, 6, 8}, mask_of(MaskKind::causal, 6, 6)));
    add(make_case("tiny-causal-sinks", "the tiny preset, causal, learned sinks", {2, 4, 2, 6, 6, 8},
                  mask_of(MaskKind::causal, 6, 6), true));
    add(make_case("tiny-kv-offset", "the tiny preset, 3 queries after 6 cached keys", {2, 4, 2, 3, 9, 8},
                  mask_of(MaskKind::causal, 3, 9)));
    // TinyLlama's group of 8 query heads per KV head at head size 64; 70 is off every tile size.
    add(make_case("tinyllama-group8", "TinyLlama's group of 8 at head size 64, T = S = 70, causal", {1, 16, 2, 70, 70, 64},
                  mask_of(MaskKind::causal, 70, 70)));
    add(make_case("full", "no mask, no grouping, T = S = 37", {1, 4, 4, 37, 37, 16}, mask_of(MaskKind::full, 37, 37)));
    MaskSpec sliding = mask_of(MaskKind::sliding_window, 100, 100);
    sliding.window = 17;
    add(make_case("sliding-window", "a sliding window of 17, T = S = 100", {1, 4, 2, 100, 100, 16}, sliding));
    MaskSpec sliding_offset = mask_of(MaskKind::sliding_window, 33, 130);
    sliding_offset.window = 50;
    add(make_case("sliding-window-kv-offset", "a window of 50, 33 queries after 97 cached keys", {1, 4, 2, 33, 130, 32},
                  sliding_offset));
    MaskSpec sink_window = mask_of(MaskKind::sink_window, 100, 100);
    sink_window.window = 20;
    sink_window.sinks = 4;
    add(make_case("sink-window-sinks", "4 sink keys plus a window of 20, learned sinks, T = S = 100",
                  {1, 4, 2, 100, 100, 16}, sink_window, true));
    MaskSpec prefix = mask_of(MaskKind::prefix_lm, 77, 77);
    prefix.prefix = 30;
    add(make_case("prefix-lm", "prefix-LM, a bidirectional prefix of 30, T = S = 77", {1, 4, 2, 77, 77, 16}, prefix));
    MaskSpec chunked = mask_of(MaskKind::chunked, 90, 90);
    chunked.chunk = 24;
    add(make_case("chunked", "chunks of 24, T = S = 90", {1, 4, 2, 90, 90, 16}, chunked));
    MaskSpec document = mask_of(MaskKind::document, 81, 81);
    document.document_lengths = {20, 1, 35, 25};
    add(make_case("document", "4 packed documents of 20, 1, 35 and 25, T = S = 81", {1, 4, 2, 81, 81, 16}, document));
    add(make_case("blind-row", "causal, T = S = 40, query row 5 sees no key", {1, 4, 2, 40, 40, 16},
                  mask_of(MaskKind::causal, 40, 40), false, 5));
    add(make_case("blind-row-sinks", "causal, T = S = 40, query row 5 sees no key, learned sinks", {1, 4, 2, 40, 40, 16},
                  mask_of(MaskKind::causal, 40, 40), true, 5));
    // Decode: one new query over a long cache.
    add(make_case("decode-tiny", "decode, the tiny preset, 9 keys", {2, 4, 2, 1, 9, 8}, mask_of(MaskKind::causal, 1, 9)));
    add(make_case("decode-group8", "decode, TinyLlama's group of 8 at head size 64, 1,000 keys", {1, 16, 2, 1, 1000, 64},
                  mask_of(MaskKind::causal, 1, 1000)));
    MaskSpec decode_window = mask_of(MaskKind::sink_window, 1, 700);
    decode_window.window = 64;
    decode_window.sinks = 4;
    add(make_case("decode-sink-window-sinks", "decode, 4 sink keys plus a window of 64 of 700 keys, learned sinks",
                  {2, 4, 2, 1, 700, 16}, decode_window, true));
    return cases;
}

// The case's ranges: the mask's, with the blind row's emptied.
std::vector<std::int32_t> row_ranges(const KernelCase& c) {
    std::vector<std::int32_t> ranges = visible_key_ranges(c.mask);
    if (c.blind_row >= 0) std::fill_n(ranges.begin() + c.blind_row * 4, 4, 0);
    return ranges;
}

// The mask the ranges describe, [T, S].
Mask mask_from_ranges(const KernelCase& c, const std::vector<std::int32_t>& ranges) {
    Mask allowed = xt::zeros<std::uint8_t>({std::size_t(c.shape.T), std::size_t(c.shape.S)});
    for (std::int64_t t = 0; t < c.shape.T; ++t)
        for (std::size_t r = 0; r < 2; ++r)
            for (std::int32_t s = ranges[std::size_t(t) * 4 + 2 * r]; s < ranges[std::size_t(t) * 4 + 2 * r + 1]; ++s)
                allowed(std::size_t(t), std::size_t(s)) = 1;
    return allowed;
}

template <typename Real>
Tensor4<Real> tensor_of(const std::vector<float>& values, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    Tensor4<Real> x = Tensor4<Real>::from_shape({std::size_t(a), std::size_t(b), std::size_t(c), std::size_t(d)});
    std::copy(values.begin(), values.end(), x.begin());
    return x;
}

// The case's attention in precision Real: probs [B, Hq, T, S], heads [B, Hq, T, D].
template <typename Real>
AttentionResult<Real> reference(const KernelCase& c, const KernelInputs& in) {
    const KernelShape& s = c.shape;
    Vector<Real> sinks = Vector<Real>::from_shape({in.sinks.size()});
    std::copy(in.sinks.begin(), in.sinks.end(), sinks.begin());
    return masked_attention(tensor_of<Real>(in.q, s.B, s.Hq, s.T, s.D), tensor_of<Real>(in.k, s.B, s.Hkv, s.S, s.D),
                            tensor_of<Real>(in.v, s.B, s.Hkv, s.S, s.D), mask_from_ranges(c, in.ranges),
                            c.sinks ? &sinks : nullptr);
}

// The rule above: 2 x the fp32 reference's error + one rounding of the output.
CheckRecord against_reference(const std::string& id, const std::string& name, const std::string& compares,
                              const std::vector<float>& got, const Tensor4<double>& fp64, const Tensor4<float>& fp32) {
    const double error = got.size() == fp64.size() ? max_abs_diff(xt::adapt(got, fp64.shape()), fp64) : INFINITY;
    const double tolerance =
        attention_tolerance(max_abs_diff(fp32, fp64), output_rounding_floor(kFp32OutputUnit, max_abs(fp64)));
    return make_check(id, name, compares, error, tolerance);
}

}  // namespace

const std::vector<KernelCase>& kernel_cases() {
    static const std::vector<KernelCase> cases = make_cases();
    return cases;
}

const KernelCase& kernel_case(const std::string& id) {
    for (const KernelCase& c : kernel_cases())
        if (c.id == id) return c;
    throw InputError("unknown kernel case '" + id + "'");
}

template <typename Real>
AttentionResult<Real> masked_attention(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& v,
                                       const Mask& allowed, const Vector<Real>* sinks) {
    const Tensor4<Real> masked = apply_mask(attention_scores(q, k), allowed);  // [B, Hq, T, S]
    AttentionResult<Real> result;
    result.probs = sinks ? softmax_rows_with_sinks(masked, *sinks) : softmax_rows(masked);
    result.heads = weighted_values(result.probs, v);                         // [B, Hq, T, D]
    return result;
}

template AttentionResult<float> masked_attention(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&,
                                                 const Mask&, const Vector<float>*);
template AttentionResult<double> masked_attention(const Tensor4<double>&, const Tensor4<double>&, const Tensor4<double>&,
                                                  const Mask&, const Vector<double>*);

std::vector<std::int32_t> visible_key_ranges(const MaskSpec& spec) {
    require_valid(spec);
    std::vector<std::int32_t> ranges(std::size_t(spec.T) * 4, 0);
    for (std::int64_t t = 0; t < spec.T; ++t) {
        const std::vector<KeyRange> keys = visible_keys(spec, t);
        for (std::size_t r = 0; r < keys.size() && r < 2; ++r) {
            ranges[std::size_t(t) * 4 + 2 * r] = std::int32_t(keys[r].begin);
            ranges[std::size_t(t) * 4 + 2 * r + 1] = std::int32_t(keys[r].end);
        }
    }
    return ranges;
}

KernelInputs kernel_inputs(const KernelCase& c) {
    const KernelShape& s = c.shape;
    SplitMix64 rng(c.seed);
    const auto normals = [&](std::int64_t n) {
        std::vector<float> x(static_cast<std::size_t>(n));
        for (float& value : x) value = float(rng.normal());
        return x;
    };
    KernelInputs in;
    in.q = normals(s.B * s.Hq * s.T * s.D);
    in.k = normals(s.B * s.Hkv * s.S * s.D);
    in.v = normals(s.B * s.Hkv * s.S * s.D);
    if (c.sinks) {
        in.sinks = normals(s.Hq);
        for (float& sink : in.sinks) sink += 1.0f;  // a sink that takes a visible share of each row
    }
    in.ranges = row_ranges(c);
    return in;
}

std::vector<CheckRecord> check_kernel_output(const KernelCase& c, const std::string& kernel,
                                             const std::vector<float>& out, const std::vector<float>* probs) {
    const KernelInputs in = kernel_inputs(c);
    const AttentionResult<double> fp64 = reference<double>(c, in);
    const AttentionResult<float> fp32 = reference<float>(c, in);
    const std::string on = kernel + " on " + c.what + ": ";
    std::vector<CheckRecord> records;
    records.push_back(against_reference(c.id, "out_matches_core", on + "output vs the core's fp64 attention", out,
                                        fp64.heads, fp32.heads));
    if (!probs) return records;
    records.push_back(against_reference(c.id, "probs_match_core", on + "probabilities vs the core's fp64 softmax", *probs,
                                        fp64.probs, fp32.probs));
    const KernelShape& s = c.shape;
    const bool sized = probs->size() == fp64.probs.size();
    const Mask allowed = mask_from_ranges(c, in.ranges);
    double hidden = sized ? 0.0 : INFINITY, sums = sized ? 0.0 : INFINITY;
    for (std::int64_t row = 0; sized && row < s.B * s.Hq * s.T; ++row) {
        const std::int64_t t = row % s.T;
        double sum = 0, expected = 0;
        for (std::int64_t key = 0; key < s.S; ++key) {
            const double p = double((*probs)[std::size_t(row * s.S + key)]);
            if (!std::isfinite(p)) hidden = sums = INFINITY;
            if (!allowed(std::size_t(t), std::size_t(key))) hidden = worse_error(hidden, std::abs(p));
            sum += p;
            expected += fp64.probs.data()[row * s.S + key];
        }
        sums = worse_error(sums, std::abs(sum - expected));
    }
    records.push_back(make_check(c.id, "hidden_cells_zero", on + "probabilities the mask hides vs 0 (exact)", hidden, 0));
    records.push_back(make_check(c.id, "rows_sum_as_core",
                                 on + "each probability row's sum vs the core's (1, or 1 minus the sink's share)", sums, 1e-5));
    return records;
}

std::uint32_t kernel_tile_state(TileState state) {
    switch (state) {
        case TileState::skipped: return kKernelTileSkipped;
        case TileState::partial: return kKernelTilePartial;
        case TileState::full: return kKernelTileFull;
    }
    return 0;
}

std::vector<CheckRecord> check_tile_record(const KernelCase& c, std::int64_t tile_q, std::int64_t tile_k,
                                           std::int64_t batch, std::int64_t head, std::int64_t row,
                                           const std::vector<std::uint32_t>& states, const std::vector<float>& trace) {
    if (c.blind_row >= 0) throw InputError("kernel case '" + c.id + "' changes its mask's rows: its tiles are not the mask's");
    std::vector<TileState> expected;
    const TileCounts counts = classify_tiles(c.mask, tile_q, tile_k, &expected);
    const std::string on = "v1_flash's tile record on " + c.what + ": ";
    double wrong_tiles = states.size() == expected.size() ? 0.0 : INFINITY;
    for (std::size_t i = 0; i < states.size() && i < expected.size(); ++i)
        if (states[i] != kernel_tile_state(expected[i])) wrong_tiles += 1;

    // The row's running maximum and sum after each key tile, against the core's steps.
    const OnlineSoftmaxRow steps = online_softmax_steps(c, kernel_inputs(c), tile_k, batch, head, row);
    double m_error = trace.size() == steps.steps.size() * 2 ? 0.0 : INFINITY;
    double l_error = m_error;
    for (std::size_t tile = 0; tile < steps.steps.size() && 2 * tile + 1 < trace.size(); ++tile) {
        const OnlineSoftmaxStep& want = steps.steps[tile];
        const double got_m = trace[2 * tile], got_l = trace[2 * tile + 1];
        if (!std::isfinite(got_m) || !std::isfinite(got_l)) {
            m_error = l_error = INFINITY;
            break;
        }
        if (want.l == 0) {
            l_error = worse_error(l_error, std::abs(got_l));  // nothing seen yet: l is 0
            continue;
        }
        m_error = worse_error(m_error, std::abs(got_m - want.m) / std::max(1.0, std::abs(want.m)));
        l_error = worse_error(l_error, std::abs(got_l - want.l) / want.l);
    }
    return {
        make_check(c.id, "tiles_as_core",
                   on + "tiles skipped, partial or full vs the core's tile rule (" + std::to_string(counts.skipped) +
                       " skipped, " + std::to_string(counts.partial) + " partial, " + std::to_string(counts.full) +
                       " full), tiles that differ",
                   wrong_tiles, 0),
        make_check(c.id, "row_max_as_core", on + "row " + std::to_string(row) + "'s running maximum after each key tile vs the core's, relative",
                   m_error, 1e-5),
        make_check(c.id, "row_sum_as_core", on + "row " + std::to_string(row) + "'s running sum after each key tile vs the core's, relative",
                   l_error, 1e-5),
    };
}

KernelCase figure_case(const KernelShape& shape, const MaskSpec& mask) {
    require_valid(mask);
    if (shape.B < 1 || shape.Hq < 1 || shape.Hkv < 1 || shape.D < 1)
        throw InputError("a figure's shape needs B, Hq, Hkv and D of at least 1");
    if (shape.Hq % shape.Hkv != 0)
        throw InputError("the " + std::to_string(shape.Hq) + " query heads do not divide among " + std::to_string(shape.Hkv) + " KV heads");
    if (mask.T != shape.T || mask.S != shape.S)
        throw InputError("the mask is " + std::to_string(mask.T) + " x " + std::to_string(mask.S) + " but the shape's T x S is " +
                         std::to_string(shape.T) + " x " + std::to_string(shape.S));
    // The figures go up to 2^26 query-key pairs a head: inputs of at most a few hundred MB.
    if (shape.B * shape.Hq * shape.T * shape.D > (std::int64_t(1) << 26) ||
        shape.B * shape.Hkv * shape.S * shape.D > (std::int64_t(1) << 26))
        throw InputError("a figure's q, k or v may hold at most 2^26 numbers");
    KernelCase c = make_case("figure", "the figure's shape, " + mask_kind_name(mask.kind) + ", T = " + std::to_string(shape.T) +
                                           ", S = " + std::to_string(shape.S),
                             shape, mask);
    c.seed += std::uint64_t(shape.Hq * 31 + shape.D);
    return c;
}

std::vector<CheckRecord> check_kernel_sample(const KernelCase& c, const std::string& kernel, const std::vector<float>& out,
                                             std::int64_t rows) {
    const KernelShape& s = c.shape;
    const std::int64_t all = s.B * s.Hq * s.T;
    rows = std::clamp<std::int64_t>(rows, 1, all);
    const KernelInputs in = kernel_inputs(c);
    const bool sized = out.size() == std::size_t(all * s.D);
    double error = sized ? 0.0 : INFINITY, fp32_error = 0, largest = 0;
    for (std::int64_t i = 0; i < rows; ++i) {
        // The first and the last row and evenly between: [B * Hq * T] flattened.
        const std::int64_t at = rows == 1 ? 0 : i * (all - 1) / (rows - 1);
        const std::int64_t t = at % s.T, head = (at / s.T) % s.Hq, batch = at / (s.T * s.Hq);
        const RowAttention<double> fp64 = row_attention<double>(c, in, batch, head, t);
        const RowAttention<float> fp32 = row_attention<float>(c, in, batch, head, t);
        for (std::int64_t d = 0; d < s.D; ++d) {
            const double want = fp64.out[std::size_t(d)];
            largest = std::max(largest, std::abs(want));
            fp32_error = worse_error(fp32_error, std::abs(double(fp32.out[std::size_t(d)]) - want));
            if (sized) error = worse_error(error, std::abs(double(out[std::size_t(at * s.D + d)]) - want));
        }
    }
    const double tolerance = attention_tolerance(fp32_error, output_rounding_floor(kFp32OutputUnit, largest));
    return {make_check(c.id, "out_matches_core_sampled",
                       kernel + " on " + c.what + ": output vs the core's fp64 attention on " + std::to_string(rows) + " of " +
                           std::to_string(all) + " query rows",
                       error, tolerance)};
}

}  // namespace anatomy
