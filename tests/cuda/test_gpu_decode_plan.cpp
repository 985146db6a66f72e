// Decode version 2's bookkeeping and arithmetic (native/cuda/decode_plan.hpp)
// held to the core on the CPU, without a GPU: the plan's chunks, which thread
// reads which key and channels, the partial-state layout, and the split / merge
// arithmetic. An emulation walks the kernel's structure (blocks, slots, lane
// butterflies, warps, the last block's merge) through the same functions the
// kernel calls, and its output is compared with the core's attention in fp64.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cuda/attention_kernels.hpp"
#include "cuda/attention_mask_spec.hpp"
#include "cuda/gpu_kernel_checks.hpp"
#include "model/random.hpp"
#include "ops/attention.hpp"

using namespace anatomy;
using namespace anatomy::gpu;

namespace {

constexpr double kLog2e = 1.4426950408889634;

// The GPU kernel checks' inputs (gpu_kernel_checks.hpp): q [B, Hq, 1, D]; k, v
// [B, Hkv, capacity, D] with rows S .. capacity - 1 NaN (a read past S shows).
struct Inputs {
    AttentionShape sh;
    std::vector<float> q, k, v;
};

Inputs random_inputs(const AttentionShape& sh, std::uint64_t seed) {
    AttentionInputs in = random_attention_inputs(sh, false, seed);
    return {sh, std::move(in.q), std::move(in.k), std::move(in.v)};
}

// The core's attention in fp64 (core/ops/attention.hpp), the mask from core/masks.hpp.  ->  [B, Hq, D]
std::vector<double> core_attention(const Inputs& in, const MaskSpec& spec) {
    const AttentionShape& sh = in.sh;
    Tensor4<double> q({std::size_t(sh.B), std::size_t(sh.Hq), 1, std::size_t(sh.D)});
    Tensor4<double> k({std::size_t(sh.B), std::size_t(sh.Hkv), std::size_t(sh.S), std::size_t(sh.D)});
    Tensor4<double> v(k.shape());
    std::copy(in.q.begin(), in.q.end(), q.begin());
    for (int b = 0; b < sh.B; ++b)
        for (int h = 0; h < sh.Hkv; ++h)
            for (int s = 0; s < sh.S; ++s)
                for (int d = 0; d < sh.D; ++d) {
                    const std::size_t i = ((std::size_t(b) * sh.Hkv + h) * sh.kv_capacity + s) * sh.D + d;
                    k(b, h, s, d) = in.k[i];
                    v(b, h, s, d) = in.v[i];
                }
    Mask allowed({1, std::size_t(sh.S)});
    for (int s = 0; s < sh.S; ++s) allowed(0, s) = mask_allows(spec, 0, s) ? 1 : 0;
    const Tensor4<double> out = weighted_values(softmax_rows(apply_mask(attention_scores(q, k), allowed)), v);
    return std::vector<double>(out.begin(), out.end());
}

// One lane's state for the G query heads of its group: m, l and acc over its C channels.
template <int G, int C>
struct LaneState {
    float q[G][C], acc[G][C], m[G], l[G];
};

// The kernel, block by block and lane by lane, for D channels and element size E_BYTES
// (values are floats here; the bf16 rounding of inputs is the kernel checks' business).
template <int D, int G, int E_BYTES>
std::vector<float> emulate_decode_group(const Inputs& in, const GpuMask& mask, const DecodePlan& plan) {
    using Lanes = DecodeLanes<D, E_BYTES>;
    constexpr int C = Lanes::channels, kLanesPerKey = Lanes::lanes_per_key, kSlots = Lanes::slots;
    const AttentionShape& sh = in.sh;
    const float scale_log2 = float(kLog2e / std::sqrt(double(D)));
    const long long q_abs = mask.history;
    std::vector<float> partial_out(std::size_t(sh.B) * sh.Hkv * plan.splits * G * D, std::nanf(""));
    std::vector<float> partial_ml(std::size_t(sh.B) * sh.Hkv * plan.splits * G * 2, std::nanf(""));
    std::vector<float> out(std::size_t(sh.B) * sh.Hq * D, std::nanf(""));

    for (int row = 0; row < sh.B * sh.Hkv; ++row) {
        const int b = row / sh.Hkv, kv_head = row % sh.Hkv;
        const float* k_head = &in.k[std::size_t(row) * sh.kv_capacity * D];
        const float* v_head = &in.v[std::size_t(row) * sh.kv_capacity * D];
        const float* q_group = &in.q[(std::size_t(b) * sh.Hq + kv_head * G) * D];
        for (int split = 0; split < plan.splits; ++split) {
            const int s_begin = split_begin(plan, split), s_end = split_end(plan, split, sh.S);
            std::vector<LaneState<G, C>> lanes(kGroupDecodeThreads);
            for (int t = 0; t < kGroupDecodeThreads; ++t) {
                const int channel0 = Lanes::channel_of(t);
                for (int g = 0; g < G; ++g) {
                    for (int c = 0; c < C; ++c) {
                        lanes[t].q[g][c] = q_group[g * D + channel0 + c] * scale_log2;
                        lanes[t].acc[g][c] = 0.0f;
                    }
                    lanes[t].m[g] = -INFINITY, lanes[t].l[g] = 0.0f;
                }
            }
            if (!tile_skipped(mask, q_abs, q_abs, s_begin, s_end - 1))
                for (int step = 0; step * kSlots < s_end - s_begin; ++step)
                    for (int warp = 0; warp < kGroupDecodeWarps; ++warp)
                        for (int g = 0; g < G; ++g) {
                            // Each lane's partial dot product, then the butterfly over the lanes of one key row.
                            float dot[32];
                            int key[32];
                            float value[32][C];
                            for (int lane = 0; lane < 32; ++lane) {
                                const int t = warp * 32 + lane;
                                key[lane] = slot_key(s_begin, s_end, kSlots, Lanes::slot_of(t), step);
                                const int channel0 = Lanes::channel_of(t);
                                dot[lane] = 0.0f;
                                for (int c = 0; c < C; ++c) {
                                    const float kc = key[lane] >= 0 ? k_head[std::size_t(key[lane]) * D + channel0 + c] : 0.0f;
                                    value[lane][c] = key[lane] >= 0 ? v_head[std::size_t(key[lane]) * D + channel0 + c] : 0.0f;
                                    dot[lane] += lanes[t].q[g][c] * kc;
                                }
                            }
                            for (int offset = kLanesPerKey / 2; offset > 0; offset /= 2) {
                                float next[32];
                                for (int lane = 0; lane < 32; ++lane) next[lane] = dot[lane] + dot[lane ^ offset];
                                std::copy(next, next + 32, dot);
                            }
                            for (int lane = 0; lane < 32; ++lane) {
                                LaneState<G, C>& st = lanes[warp * 32 + lane];
                                if (key[lane] >= 0 && mask_visible(mask, q_abs, key[lane]))
                                    softmax_push(st.m[g], st.l[g], st.acc[g], dot[lane], value[lane]);
                            }
                        }
            // Slots of a warp: butterfly merges over lanes holding the same channels.
            for (int warp = 0; warp < kGroupDecodeWarps; ++warp)
                for (int offset = kLanesPerKey; offset < 32; offset *= 2)
                    for (int g = 0; g < G; ++g) {
                        std::vector<LaneState<G, C>> before(lanes.begin() + warp * 32, lanes.begin() + warp * 32 + 32);
                        for (int lane = 0; lane < 32; ++lane) {
                            const LaneState<G, C>& other = before[lane ^ offset];
                            LaneState<G, C>& st = lanes[warp * 32 + lane];
                            softmax_merge(st.m[g], st.l[g], st.acc[g], other.m[g], other.l[g], other.acc[g]);
                        }
                    }
            // Warps in order, per (g, d), written to the partial-state layout.
            for (int g = 0; g < G; ++g)
                for (int d = 0; d < D; ++d) {
                    float bm = -INFINITY, bl = 0.0f, bo[1] = {0.0f};
                    for (int warp = 0; warp < kGroupDecodeWarps; ++warp) {
                        const int lane = d / C;  // lane < lanes_per_key holds channels d / C * C ..
                        const LaneState<G, C>& st = lanes[warp * 32 + lane];
                        const float o_w[1] = {st.acc[g][d % C]};
                        softmax_merge(bm, bl, bo, st.m[g], st.l[g], o_w);
                    }
                    const long long state = partial_state(row, split, g, plan.splits, G);
                    partial_out[state * D + d] = bo[0];
                    if (d == 0) partial_ml[state * 2] = bm, partial_ml[state * 2 + 1] = bl;
                }
        }
        // The row's last block: M and 1 / L per head, the chunk weights, the weighted sum.
        for (int g = 0; g < G; ++g) {
            float top = -INFINITY, sum = 0.0f;
            for (int i = 0; i < plan.splits; ++i) top = std::max(top, partial_ml[partial_state(row, i, g, plan.splits, G) * 2]);
            for (int i = 0; i < plan.splits; ++i) {
                const float* ml = &partial_ml[partial_state(row, i, g, plan.splits, G) * 2];
                if (ml[0] != -INFINITY) sum += ml[1] * std::exp2(ml[0] - top);
            }
            const float inv_sum = sum > 0.0f ? 1.0f / sum : 0.0f;
            for (int d = 0; d < D; ++d) {
                float o = 0.0f;
                for (int i = 0; i < plan.splits; ++i) {
                    const long long state = partial_state(row, i, g, plan.splits, G);
                    const float w = split_weight(partial_ml[state * 2], top, inv_sum);
                    if (w != 0.0f) o += w * partial_out[state * D + d];
                }
                out[(std::size_t(b) * sh.Hq + kv_head * G + g) * D + d] = o;
            }
        }
    }
    return out;
}

template <int D, int G, int E_BYTES>
double worst_error(const AttentionShape& sh, const MaskSpec& spec, int multiprocessors, std::uint64_t seed) {
    const Inputs in = random_inputs(sh, seed);
    const DecodePlan plan = decode_group_plan(sh.B, sh.Hkv, sh.S, multiprocessors);
    const std::vector<float> got = emulate_decode_group<D, G, E_BYTES>(in, gpu_mask_from_spec(spec), plan);
    const std::vector<double> want = core_attention(in, spec);
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double e = std::abs(double(got[i]) - want[i]);
        if (std::isnan(e)) return INFINITY;
        worst = std::max(worst, e);
    }
    return worst;
}

MaskSpec decode_mask(MaskKind kind, int S, int window = 0, int sinks = 0) {
    MaskSpec spec{kind, 1, S};
    spec.window = window;
    spec.sinks = sinks;
    require_valid(spec);
    return spec;
}

}  // namespace

TEST_CASE("the plan's chunks cover every key once, 128 or 256 keys each") {
    for (int B : {1, 2, 7})
        for (int Hkv : {1, 4, 32})
            for (int S : {1, 2, 127, 128, 129, 1000, 4133, 16384, 65536})
                for (int sms : {1, 132}) {
                    const DecodePlan plan = decode_group_plan(B, Hkv, S, sms);
                    INFO("B " << B << " Hkv " << Hkv << " S " << S << " SMs " << sms);
                    CHECK((plan.keys_per_split == 128 || plan.keys_per_split == 256));
                    CHECK(plan.splits >= 1);
                    int next = 0;
                    for (int split = 0; split < plan.splits; ++split) {
                        CHECK(split_begin(plan, split) == next);
                        CHECK(split_end(plan, split, S) > split_begin(plan, split));  // no empty chunk
                        CHECK(split_end(plan, split, S) - split_begin(plan, split) <= plan.keys_per_split);
                        next = split_end(plan, split, S);
                    }
                    CHECK(next == S);
                    // 256 only when the grid keeps two blocks per multiprocessor.
                    if (plan.keys_per_split == 256) CHECK(1LL * B * Hkv * plan.splits >= 2LL * sms);
                }
}

template <int D, int E_BYTES>
void check_every_key_and_channel_read_once(int chunk) {
    using Lanes = DecodeLanes<D, E_BYTES>;
    std::vector<int> reads(std::size_t(chunk) * D, 0);
    for (int t = 0; t < kGroupDecodeThreads; ++t)
        for (int step = 0; step * Lanes::slots < chunk; ++step) {
            const int key = slot_key(0, chunk, Lanes::slots, Lanes::slot_of(t), step);
            if (key < 0) continue;
            CHECK(Lanes::channel_of(t) % Lanes::channels == 0);  // 16-byte aligned within the row
            for (int c = 0; c < Lanes::channels; ++c) ++reads[std::size_t(key) * D + Lanes::channel_of(t) + c];
        }
    for (std::size_t i = 0; i < reads.size(); ++i) REQUIRE_MESSAGE(reads[i] == 1, "cell " << i << " read " << reads[i] << " times");
}

TEST_CASE("the threads of a block read each key row's channels exactly once, 16 bytes a lane") {
    for (int chunk : {1, 100, 128, 256}) {
        check_every_key_and_channel_read_once<8, 2>(chunk);
        check_every_key_and_channel_read_once<64, 2>(chunk);
        check_every_key_and_channel_read_once<128, 2>(chunk);
        check_every_key_and_channel_read_once<8, 4>(chunk);
        check_every_key_and_channel_read_once<64, 4>(chunk);
        check_every_key_and_channel_read_once<128, 4>(chunk);
    }
    CHECK(DecodeLanes<128, 2>::lanes_per_key == 16);
    CHECK(DecodeLanes<128, 2>::slots == 16);
    CHECK(DecodeLanes<8, 2>::slots == 256);
}

TEST_CASE("every (row, chunk, head) has its own partial state") {
    const int rows = 3, splits = 5, G = 4;
    std::vector<int> seen(rows * splits * G, 0);
    for (int row = 0; row < rows; ++row)
        for (int split = 0; split < splits; ++split)
            for (int g = 0; g < G; ++g) ++seen[std::size_t(partial_state(row, split, g, splits, G))];
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("online softmax: pushing keys one by one, in any split and merge order, gives the softmax") {
    SplitMix64 random(7);
    std::vector<float> x(300), v(300);
    for (float& e : x) e = float(4 * random.normal());
    for (float& e : v) e = float(random.normal());
    double top = -INFINITY, sum = 0, want = 0;
    for (float e : x) top = std::max(top, double(e));
    for (std::size_t i = 0; i < x.size(); ++i) sum += std::exp2(double(x[i]) - top);
    for (std::size_t i = 0; i < x.size(); ++i) want += std::exp2(double(x[i]) - top) / sum * v[i];
    for (std::size_t cut : {std::size_t(0), std::size_t(1), std::size_t(150), std::size_t(299)}) {
        float m1 = -INFINITY, l1 = 0, a1[1] = {0}, m2 = -INFINITY, l2 = 0, a2[1] = {0};
        for (std::size_t i = 0; i < x.size(); ++i) {
            const float value[1] = {v[i]};
            if (i < cut) softmax_push(m1, l1, a1, x[i], value);
            else softmax_push(m2, l2, a2, x[i], value);
        }
        softmax_merge(m1, l1, a1, m2, l2, a2);
        CHECK(std::abs(a1[0] / l1 - want) <= 1e-5);
        CHECK(std::abs(double(m1) - top) == 0);
    }
    // An empty state (m = -inf) merges as nothing, from either side.
    float m = 1.5f, l = 2.0f, a[1] = {3.0f};
    const float none[1] = {123.0f};
    softmax_merge(m, l, a, -INFINITY, 0.0f, none);
    CHECK((m == 1.5f && l == 2.0f && a[0] == 3.0f));
    float me = -INFINITY, le = 0.0f, ae[1] = {0.0f};
    softmax_merge(me, le, ae, m, l, a);
    CHECK((me == 1.5f && le == 2.0f && ae[0] == 3.0f));
    CHECK(split_weight(-INFINITY, 1.0f, 1.0f) == 0.0f);
}

// fp32 sums of D products and up to 64k keys: errors of a few 1e-7 of |out| <= ~3.
constexpr double kTolerance = 2e-5;

TEST_CASE("the emulated kernel equals the core's attention: group sizes, head dims, chunk counts, masks") {
    // B 2 x (Hq 4 on Hkv 2): group 2; chunks of 128 from S = 1000 (8 chunks, the last partial).
    for (int S : {1, 5, 128, 1000}) {
        const AttentionShape sh{2, 4, 2, 1, S, 64, S + 3};
        CHECK(worst_error<64, 2, 2>(sh, decode_mask(MaskKind::causal, S), 132, 11) <= kTolerance);
        CHECK(worst_error<64, 2, 4>(sh, decode_mask(MaskKind::causal, S), 132, 12) <= kTolerance);
    }
    // Group 8 at D 128 (TinyLlama-like 32 on 4, one KV head here), chunks of 256 on one multiprocessor.
    const AttentionShape g8{1, 8, 1, 1, 1500, 128, 1501};
    CHECK(decode_group_plan(1, 1, 1500, 1).keys_per_split == 256);
    CHECK(worst_error<128, 8, 2>(g8, decode_mask(MaskKind::causal, 1500), 1, 13) <= kTolerance);
    // Group 1 and the tiny model's head size 8.
    const AttentionShape g1{1, 2, 2, 1, 300, 8, 300};
    CHECK(worst_error<8, 1, 2>(g1, decode_mask(MaskKind::causal, 300), 132, 14) <= kTolerance);
    CHECK(worst_error<8, 1, 4>(g1, decode_mask(MaskKind::causal, 300), 132, 15) <= kTolerance);
    // Windows: chunks wholly before the window are skipped (empty states) and merge as nothing.
    const AttentionShape w{1, 4, 1, 1, 4133, 64, 4136};
    CHECK(worst_error<64, 4, 2>(w, decode_mask(MaskKind::sliding_window, 4133, 300), 132, 16) <= kTolerance);
    CHECK(worst_error<64, 4, 2>(w, decode_mask(MaskKind::sink_window, 4133, 300, 4), 132, 17) <= kTolerance);
    CHECK(worst_error<64, 4, 2>(w, decode_mask(MaskKind::full, 4133), 132, 18) <= kTolerance);
}

TEST_CASE("the comparison can fail: a plan that drops the last chunk, or the wrong KV head, is caught") {
    const AttentionShape sh{1, 4, 2, 1, 1000, 64, 1003};
    const MaskSpec spec = decode_mask(MaskKind::causal, 1000);
    const Inputs in = random_inputs(sh, 21);
    const std::vector<double> want = core_attention(in, spec);
    auto error_of = [&](const std::vector<float>& got) {
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - want[i]));
        return worst;
    };
    DecodePlan short_plan = decode_group_plan(1, 2, 1000, 132);
    short_plan.splits -= 1;  // keys 896 .. 999 never read
    CHECK(error_of(emulate_decode_group<64, 2, 2>(in, gpu_mask_from_spec(spec), short_plan)) > 1e-2);
    // Query heads of KV head 1 reading KV head 0: swap the two KV heads' rows.
    Inputs swapped = in;
    const std::size_t head = std::size_t(sh.kv_capacity) * sh.D;
    std::swap_ranges(swapped.k.begin(), swapped.k.begin() + head, swapped.k.begin() + head);
    std::swap_ranges(swapped.v.begin(), swapped.v.begin() + head, swapped.v.begin() + head);
    const DecodePlan plan = decode_group_plan(1, 2, 1000, 132);
    CHECK(error_of(emulate_decode_group<64, 2, 2>(swapped, gpu_mask_from_spec(spec), plan)) > 1e-2);
}
