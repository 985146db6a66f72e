// v4 (attention_kernels.hpp): the reference's four steps (ops/attention.cpp) as four
// calls, each vectorised, giving the reference's bits exactly for finite inputs. This
// is what the model runs (model/decoder_layer.hpp, model/first_layer_attention.cpp):
// it keeps the scores and probabilities [B, Hq, T, S] that the trace, the widgets and
// training's backward read, where v1 to v3 never hold them.
//
// Same bits as the reference, because every sum runs in the reference's order (over d
// for a score, over s for a row's total and a weighted sum) and nothing is fused: this
// file is compiled as the operations are (core/CMakeLists.txt: the vector unit, never
// fused multiply-add), not with the kernels' flags. What it changes is only how much
// is computed at once:
//   - scores: sixteen keys side by side against a transposed copy of the keys;
//   - mask: eight cells selected at once;
//   - softmax: a causal row's masked tail is found by a vector scan, set to 0 and
//     skipped (the reference adds its exact zeros); the row maximum by a vector scan;
//   - weighted sum: four query rows side by side, each stopping at its last nonzero
//     weight (the reference adds 0 times each masked value).
// Fully masked rows give zeros in both. A masked key with an infinite or NaN value is
// where they part: the reference's 0 * inf is NaN, this version skips that key when it
// lies in the row's masked tail.
//
// Measured speed: the table at the top of attention_kernels.cpp (v4) and docs/perf.md.
#include "attention_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attention.hpp"
#include "exponential.hpp"

namespace anatomy {
namespace {

// The row scans (and the mask's select) look at eight entries at a time as one value
// (GCC's and clang's vector extension, as in pretrained/weight_view.cpp): lane j sees
// entries s = j (mod 8), and the lanes are combined once per row. A maximum and a
// "last index" are exact in any order, so the results are those of a scan from the
// front. In wasm, a scalar scan from the back and std::max_element took 1.5 of the
// 2.7 ms of the softmax on 8 heads x 256 x 256 causal scores; these scans take 0.4.
constexpr std::size_t kScanLanes = 8;
template <typename Real> struct ScanLanes;
template <> struct ScanLanes<float> { typedef float type __attribute__((vector_size(kScanLanes * sizeof(float)))); };
template <> struct ScanLanes<double> { typedef double type __attribute__((vector_size(kScanLanes * sizeof(double)))); };

// The length of `row` without its trailing run of `value` (a causal row's masked
// tail: -inf among scores, 0 among probabilities): the last index holding anything
// else, plus one; 0 when every entry is `value`.
template <typename Real>
std::size_t trimmed_length(const Real* row, std::size_t n, Real value) {
    using Lanes = typename ScanLanes<Real>::type;
    using Indices = decltype(Lanes{} != value);  // integer lanes as wide as Real
    Indices last, index;                         // per lane: the last index holding something else (or -1); s + j
    for (std::size_t j = 0; j < kScanLanes; ++j) last[j] = -1, index[j] = std::int64_t(j);
    std::size_t s = 0;
    for (; s + kScanLanes <= n; s += kScanLanes, index += kScanLanes) {
        Lanes entries;
        std::memcpy(&entries, row + s, sizeof entries);
        last = entries != value ? index : last;
    }
    std::int64_t found = -1;
    for (std::size_t j = 0; j < kScanLanes; ++j) found = found < last[j] ? last[j] : found;
    for (; s < n; ++s)
        if (row[s] != value) found = std::int64_t(s);
    return std::size_t(found + 1);
}

// The largest of row[0 .. n) (-inf when n is 0).
template <typename Real>
Real row_maximum(const Real* row, std::size_t n) {
    using Lanes = typename ScanLanes<Real>::type;
    const Real lowest = -std::numeric_limits<Real>::infinity();
    Lanes best;
    for (std::size_t j = 0; j < kScanLanes; ++j) best[j] = lowest;
    std::size_t s = 0;
    for (; s + kScanLanes <= n; s += kScanLanes) {
        Lanes entries;
        std::memcpy(&entries, row + s, sizeof entries);
        best = best < entries ? entries : best;
    }
    Real found = lowest;
    for (std::size_t j = 0; j < kScanLanes; ++j) found = found < best[j] ? best[j] : found;
    for (; s < n; ++s) found = found < row[s] ? row[s] : found;
    return found;
}

}  // namespace

namespace {

constexpr std::size_t kKeyBlock = 16;  // keys scored side by side

// out[j] = (sum_d q_row[d] * k_t[d, j]) * scale for j < width, the sum in order of d:
// the same bits as key by key. The width accumulators stay in registers for the
// whole sum (with a run-time width they were kept in memory).
//   q_row: [dh], k_t: the keys' channels, row stride S
template <std::size_t width, typename Real>
void score_block(const Real* q_row, const Real* k_t, std::size_t S, std::size_t dh, Real scale, Real* out) {
    Real acc[width] = {};
    for (std::size_t d = 0; d < dh; ++d) {
        const Real q_d = q_row[d];
        const Real* k_d = k_t + d * S;  // channel d of this block's keys
        for (std::size_t j = 0; j < width; ++j) acc[j] += q_d * k_d[j];
    }
    for (std::size_t j = 0; j < width; ++j) out[j] = acc[j] * scale;
}

}  // namespace

template <typename Real>
Tensor4<Real> attention_scores_fast(const Tensor4<Real>& q, const Tensor4<Real>& k) {
    const std::size_t B = q.shape(0), Hq = q.shape(1), T = q.shape(2), dh = q.shape(3);
    const std::size_t Hkv = k.shape(1), S = k.shape(2);
    if (k.shape(0) != B || k.shape(3) != dh) throw InputError("attention_scores_fast: q and k disagree in shape");
    const std::size_t group = kv_group(Hq, Hkv);
    const Real scale = Real(1.0 / std::sqrt(double(dh)));

    // Each KV head's keys transposed once, [dh, S], so that a query's scores against
    // a block of keys are computed side by side, one lane per key (vectorised).
    std::vector<Real> k_t(dh * S);
    Tensor4<Real> scores({B, Hq, T, S});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const Real* k_head = &k(b, h / group, 0, 0);  // GQA: query head h reads KV head h / group, in place
            if (h % group == 0)                           // the first query head of its group: transpose [S, dh]
                for (std::size_t s = 0; s < S; ++s)
                    for (std::size_t d = 0; d < dh; ++d) k_t[d * S + s] = k_head[s * dh + d];
            for (std::size_t t = 0; t < T; ++t) {
                const Real* q_row = &q(b, h, t, 0);
                Real* out = &scores(b, h, t, 0);
                std::size_t s0 = 0;
                for (; s0 + kKeyBlock <= S; s0 += kKeyBlock) score_block<kKeyBlock>(q_row, k_t.data() + s0, S, dh, scale, out + s0);
                for (; s0 < S; ++s0) score_block<1>(q_row, k_t.data() + s0, S, dh, scale, out + s0);
            }
        }
    return scores;
}

namespace {

// out[i] = allowed[i] ? in[i] : forbidden for i < n, eight at a time as one value:
// written as a plain loop, clang's wasm build kept it scalar (widening the mask's
// bytes to lanes as wide as a float is what it would not do).
template <typename Real>
void select_allowed(const Real* in, const std::uint8_t* allowed, std::size_t n, Real forbidden, Real* out) {
    using Lanes = typename ScanLanes<Real>::type;
    using Flags = decltype(Lanes{} != forbidden);  // integer lanes as wide as Real
    typedef std::uint8_t Bytes __attribute__((vector_size(kScanLanes)));
    std::size_t i = 0;
    for (; i + kScanLanes <= n; i += kScanLanes) {
        Lanes entries;
        std::memcpy(&entries, in + i, sizeof entries);
        Bytes bytes;
        std::memcpy(&bytes, allowed + i, sizeof bytes);
        const Lanes selected = __builtin_convertvector(bytes, Flags) != 0 ? entries : forbidden;
        std::memcpy(out + i, &selected, sizeof selected);
    }
    for (; i < n; ++i) out[i] = allowed[i] ? in[i] : forbidden;
}

}  // namespace

template <typename Real>
Tensor4<Real> apply_mask_fast(const Tensor4<Real>& scores, const Mask& allowed) {
    const std::size_t T = scores.shape(2), S = scores.shape(3);
    if (allowed.shape(0) != T || allowed.shape(1) != S) throw InputError("apply_mask_fast: mask shape differs from scores");
    const std::size_t planes = scores.shape(0) * scores.shape(1);
    const Real forbidden = -std::numeric_limits<Real>::infinity();
    Tensor4<Real> masked(scores.shape());
    for (std::size_t p = 0; p < planes; ++p)
        select_allowed(scores.data() + p * T * S, allowed.data(), T * S, forbidden, masked.data() + p * T * S);
    return masked;
}

namespace {

// One row of softmax_rows_fast, with a sink column when `sink` is given (softmax_rows_with_sinks:
// the sink joins the maximum, and the sum after the keys).
template <typename Real>
void softmax_row(const Real* in, std::size_t S, const Real* sink, Real* out) {
    // Keys after the last allowed one (a causal row's masked tail) get exactly 0
    // and take no part below, as e^-inf = 0 would give them.
    const std::size_t end = trimmed_length(in, S, -std::numeric_limits<Real>::infinity());
    std::fill(out + end, out + S, Real(0));
    if (end == 0 && !sink) return;  // no allowed key: a row of zeros rather than NaN
    Real row_max = end > 0 ? row_maximum(in, end) : *sink;
    if (sink) row_max = row_max < *sink ? *sink : row_max;
    // exponential (ops/exponential.hpp) gives the same bits natively and in wasm; in a
    // loop of its own it vectorises (the sum, in order of s, cannot).
    for (std::size_t s = 0; s < end; ++s) out[s] = exponential(in[s] - row_max);  // e^-inf = 0 for forbidden keys
    Real sum = 0;
    for (std::size_t s = 0; s < end; ++s) sum += out[s];
    if (sink) sum += exponential(*sink - row_max);
    for (std::size_t s = 0; s < end; ++s) out[s] /= sum;
}

}  // namespace

template <typename Real>
Tensor4<Real> softmax_rows_fast(const Tensor4<Real>& x) {
    const std::size_t S = x.shape(3);
    const std::size_t rows = x.size() / (S ? S : 1);
    Tensor4<Real> probs(x.shape());
    for (std::size_t r = 0; r < rows; ++r) softmax_row<Real>(x.data() + r * S, S, nullptr, probs.data() + r * S);
    return probs;
}

template <typename Real>
Tensor4<Real> softmax_rows_with_sinks_fast(const Tensor4<Real>& x, const Vector<Real>& sinks) {
    const std::size_t H = x.shape(1), T = x.shape(2), S = x.shape(3);
    if (sinks.size() != H) throw InputError("softmax_rows_with_sinks_fast: " + std::to_string(sinks.size()) + " sinks for " + std::to_string(H) + " heads");
    const std::size_t rows = x.size() / (S ? S : 1);
    Tensor4<Real> probs(x.shape());
    for (std::size_t r = 0; r < rows; ++r) softmax_row<Real>(x.data() + r * S, S, &sinks(r / T % H), probs.data() + r * S);
    return probs;
}

namespace {

constexpr std::size_t kChannels = 8;  // output channels per register accumulator
constexpr std::size_t kQueryRows = 4;  // query rows summed side by side

// out[r, d0 .. d0 + width) = sum_{s < ends[r]} p_rows[r][s] * v[s, d0 ..] for r < kQueryRows,
// each sum in order of s. The rows' sums are independent chains of additions, so four
// side by side keep the adder busy where one waits on its own result; v[s] is read
// once for all four. Keys past a row's end (its masked tail) are left out of that row
// only. In wasm, 8 heads x 256 causal rows (dh = 8) took 1.8 ms one row at a time and
// 1.1 ms four at a time; eight at a time, 1.4 (the accumulators no longer fit in registers).
template <typename Real>
void weighted_rows(const Real* const* p_rows, const std::size_t* ends, const Real* v_head, std::size_t dh,
                   std::size_t d0, std::size_t width, Real* const* outs) {
    const std::size_t shared = *std::min_element(ends, ends + kQueryRows);  // keys every row reads
    Real acc[kQueryRows][kChannels] = {};
    for (std::size_t s = 0; s < shared; ++s) {
        const Real* v_row = v_head + s * dh + d0;
        for (std::size_t r = 0; r < kQueryRows; ++r)
            for (std::size_t d = 0; d < width; ++d) acc[r][d] += p_rows[r][s] * v_row[d];
    }
    for (std::size_t r = 0; r < kQueryRows; ++r) {
        for (std::size_t s = shared; s < ends[r]; ++s)
            for (std::size_t d = 0; d < width; ++d) acc[r][d] += p_rows[r][s] * v_head[s * dh + d0 + d];
        std::copy(acc[r], acc[r] + width, outs[r] + d0);
    }
}

}  // namespace

template <typename Real>
Tensor4<Real> weighted_values_fast(const Tensor4<Real>& probs, const Tensor4<Real>& v) {
    const std::size_t B = probs.shape(0), Hq = probs.shape(1), T = probs.shape(2), S = probs.shape(3);
    const std::size_t Hkv = v.shape(1), dh = v.shape(3);
    if (v.shape(0) != B || v.shape(2) != S) throw InputError("weighted_values_fast: probs and v disagree in shape");
    const std::size_t group = kv_group(Hq, Hkv);

    Tensor4<Real> out({B, Hq, T, dh});
    std::vector<Real> spare(dh);  // the output of a short tile's padding rows
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const Real* v_head = &v(b, h / group, 0, 0);  // [S, dh] GQA: the shared KV head, read in place
            for (std::size_t t0 = 0; t0 < T; t0 += kQueryRows) {
                const Real* p_rows[kQueryRows];
                Real* outs[kQueryRows];
                std::size_t ends[kQueryRows];
                for (std::size_t r = 0; r < kQueryRows; ++r) {
                    const bool real_row = t0 + r < T;  // a short last tile pads with empty rows
                    p_rows[r] = &probs(b, h, real_row ? t0 + r : t0, 0);
                    outs[r] = real_row ? &out(b, h, t0 + r, 0) : spare.data();
                    // Keys after the last one with a nonzero weight (a causal row's masked
                    // tail) add 0 times a finite value vector: they are left out.
                    ends[r] = real_row ? trimmed_length(p_rows[r], S, Real(0)) : 0;
                }
                for (std::size_t d0 = 0; d0 < dh; d0 += kChannels)
                    weighted_rows(p_rows, ends, v_head, dh, d0, std::min(kChannels, dh - d0), outs);
            }
        }
    return out;
}

Tensor4<float> attention_steps(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v) {
    check_attention_shapes(q.shape(), k.shape(), v.shape());
    const Mask allowed = causal_mask(q.shape(2), k.shape(2));                              // [T, S]
    const Tensor4<float> probs = softmax_rows_fast(apply_mask_fast(attention_scores_fast(q, k), allowed));  // [B, Hq, T, S]
    return weighted_values_fast(probs, v);                                                 // [B, Hq, T, dh]
}

template Tensor4<float> attention_scores_fast(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> attention_scores_fast(const Tensor4<double>&, const Tensor4<double>&);
template Tensor4<float> apply_mask_fast(const Tensor4<float>&, const Mask&);
template Tensor4<double> apply_mask_fast(const Tensor4<double>&, const Mask&);
template Tensor4<float> softmax_rows_fast(const Tensor4<float>&);
template Tensor4<double> softmax_rows_fast(const Tensor4<double>&);
template Tensor4<float> softmax_rows_with_sinks_fast(const Tensor4<float>&, const Vector<float>&);
template Tensor4<double> softmax_rows_with_sinks_fast(const Tensor4<double>&, const Vector<double>&);
template Tensor4<float> weighted_values_fast(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> weighted_values_fast(const Tensor4<double>&, const Tensor4<double>&);

}  // namespace anatomy
