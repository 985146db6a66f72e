// Causal attention kernels, versions side by side (see attention_kernels.hpp).
//
// Measured speed, ms per call, median (`attn bench cpu`, 1 thread, B 1, Hq 32,
// Hkv 4, dh 64, causal; g++ 12 -O3 -march=native on an Intel Xeon with AVX-512;
// the whole table, its date, the machine's load, the method and the peers are in
// docs/perf.md):
//   version                 T=128   T=512  T=2048  T=4096   decode S=4096
//   v0 reference (repeated)  23.8     626       -       -     28.2
//   v1 rows                  3.60    59.6     881    3851     2.09
//   v2 grouped               1.55    22.1     331    1329     0.798
//   v3 streaming             1.48    22.8     387    1410     0.779
//   v4 steps                 8.94     167       -       -     7.01
// Grouped reaches 43.5 to 51.9 GFLOP/s at prefill (counting only visible cells), 40%
// of this build's multiply-add ceiling (multiply_add_rounds: 129.1 GFLOP/s in the
// same run). v4 (ops/attention_fast_steps.cpp, the reference's bits) runs prefill 2.7
// to 3.7 times faster than v0 (v0 also copies K and V per query head); like v0 it
// scores the masked half and holds [B, Hq, T, S] three times, which v1 to v3 never do.
//
// Plain loops over contiguous memory, written so the compiler vectorises them
// without -ffast-math: every inner loop runs over a compile-time number of
// independent lanes (no reductions inside a vector loop), and each reduction
// (a dot product's lanes, a row's max and sum) is done once per row in a fixed
// order, so a run is deterministic.
#include "attention_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attention.hpp"
#include "exponential.hpp"
#include "heads.hpp"

namespace anatomy {
namespace {

// ---- kernel traits: the vector width this build compiles for ------------------

#if defined(__AVX512F__)
constexpr std::size_t kLanes = 16;  // floats per vector register
constexpr const char* kIsa = "avx512";
#elif defined(__AVX2__)
constexpr std::size_t kLanes = 8;
constexpr const char* kIsa = "avx2";
#elif defined(__wasm_simd128__)
constexpr std::size_t kLanes = 4;
constexpr const char* kIsa = "wasm-simd128";
#elif defined(__SSE2__)
constexpr std::size_t kLanes = 4;
constexpr const char* kIsa = "sse2";
#else
constexpr std::size_t kLanes = 4;
constexpr const char* kIsa = "scalar";
#endif

// Register tiles (FlashAttention's Br x Bc, on a CPU): kRows query rows against
// kKeys keys keep kRows x kKeys accumulators in registers; P @ V keeps kRows x kDims.
// Measured with g++ 12 on the reference machine (AVX-512, micro-kernel alone):
// 8 rows x 32 keys run at 196 GFLOP/s, 4 x 32 at 68 (AVX-512 has 32 registers,
// 16 of them accumulators here); the 128- and 256-bit builds have 16 registers
// and stay at 4 rows. The streaming kernel's online-softmax step takes 8 panels
// (256 keys with AVX-512): its per-row max and sum then cost little, and prefill
// at T = 1024 fell from 50 ms (one panel per step) to 29 ms.
constexpr std::size_t kRows = kLanes == 16 ? 8 : 4;  // query rows per register tile
constexpr std::size_t kKeys = 2 * kLanes;            // keys per K panel
constexpr std::size_t kDims = 2 * kLanes;            // output channels per P @ V tile
constexpr std::size_t kTileRows = 32;                // streaming: query rows per tile (Br)
constexpr std::size_t kBlockKeys = 8 * kKeys;        // streaming: keys per online-softmax step (Bc)

// ---- small vector helpers ---------------------------------------------------------

// Sum of kLanes partial sums, pairwise, in a fixed order.
inline float sum_lanes(float* lane) {
    for (std::size_t width = kLanes / 2; width > 0; width /= 2)
        for (std::size_t j = 0; j < width; ++j) lane[j] += lane[j + width];
    return lane[0];
}

// a . b over n floats: kLanes independent partial sums, then the tail.
inline float dot(const float* a, const float* b, std::size_t n) {
    float lane[kLanes] = {};
    std::size_t d = 0;
    for (; d + kLanes <= n; d += kLanes) {
        #pragma omp simd
        for (std::size_t j = 0; j < kLanes; ++j) lane[j] += a[d + j] * b[d + j];
    }
    float tail = 0;
    for (; d < n; ++d) tail += a[d] * b[d];
    return sum_lanes(lane) + tail;
}

inline float max_of(const float* x, std::size_t n) {
    float lane[kLanes];
    #pragma omp simd
    for (std::size_t j = 0; j < kLanes; ++j) lane[j] = -std::numeric_limits<float>::infinity();
    std::size_t s = 0;
    for (; s + kLanes <= n; s += kLanes) {
        #pragma omp simd
        for (std::size_t j = 0; j < kLanes; ++j) lane[j] = lane[j] > x[s + j] ? lane[j] : x[s + j];
    }
    float best = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < kLanes; ++j) best = std::max(best, lane[j]);
    for (; s < n; ++s) best = std::max(best, x[s]);
    return best;
}

inline float sum_of(const float* x, std::size_t n) {
    float lane[kLanes] = {};
    std::size_t s = 0;
    for (; s + kLanes <= n; s += kLanes) {
        #pragma omp simd
        for (std::size_t j = 0; j < kLanes; ++j) lane[j] += x[s + j];
    }
    float tail = 0;
    for (; s < n; ++s) tail += x[s];
    return sum_lanes(lane) + tail;
}

// x[s] <- exp(x[s] - m) for s < n; returns the sum of the results.
inline float exp_shifted(float* x, std::size_t n, float m) {
    #pragma omp simd
    for (std::size_t s = 0; s < n; ++s) x[s] = exponential(x[s] - m);
    return sum_of(x, n);
}

// Copy keys key0 .. key0 + kKeys of one KV head into one panel, transposed,
// zero-padded past S:
//   k_head: [S, dh]  ->  panel: [dh, kKeys]
// so that one query channel times kKeys keys is a contiguous vector operation.
void pack_key_panel(const float* k_head, std::size_t S, std::size_t dh, std::size_t key0, float* panel) {
    const std::size_t keys = std::min(kKeys, S - key0);
    for (std::size_t j = 0; j < keys; ++j) {
        const float* k_row = k_head + (key0 + j) * dh;
        for (std::size_t d = 0; d < dh; ++d) panel[d * kKeys + j] = k_row[d];
    }
    for (std::size_t d = 0; d < dh; ++d)
        for (std::size_t j = keys; j < kKeys; ++j) panel[d * kKeys + j] = 0;
}

// All of one KV head's keys as panels:
//   k_head: [S, dh]  ->  panels: [ceil(S / kKeys), dh, kKeys]
void pack_key_panels(const float* k_head, std::size_t S, std::size_t dh, float* panels) {
    for (std::size_t key0 = 0; key0 < S; key0 += kKeys) pack_key_panel(k_head, S, dh, key0, panels + key0 * dh);
}

// Scratch kept between calls, one set per thread, so that a decode step
// allocates nothing and large buffers are not mapped and faulted in afresh on
// every call (that was a quarter of a decode step at S = 4096). Nothing is kept
// in them: a kernel writes each value before reading it.
enum ScratchSlot { kPanelSlot, kScoreSlot, kSlotCount };
float* scratch(ScratchSlot slot, std::size_t n) {
    thread_local std::vector<float> buffers[kSlotCount];
    if (buffers[slot].size() < n) buffers[slot].resize(n);
    return buffers[slot].data();
}

// Scores of kRows query rows against one K panel, scaled:
//   q_rows: kRows pointers to [dh], panel: [dh, kKeys]  ->  out: [kRows, kKeys] (row stride out_stride)
// The kRows x kKeys accumulators stay in registers; each step broadcasts one
// query channel and multiplies it into a contiguous row of the panel.
inline void score_tile(const float* const* q_rows, const float* panel, std::size_t dh, float scale, float* out,
                       std::size_t out_stride) {
    float acc[kRows][kKeys] = {};
    for (std::size_t d = 0; d < dh; ++d) {
        const float* k_d = panel + d * kKeys;
        for (std::size_t r = 0; r < kRows; ++r) {
            const float q_rd = q_rows[r][d];
            #pragma omp simd
            for (std::size_t j = 0; j < kKeys; ++j) acc[r][j] += q_rd * k_d[j];
        }
    }
    for (std::size_t r = 0; r < kRows; ++r) {
        #pragma omp simd
        for (std::size_t j = 0; j < kKeys; ++j) out[r * out_stride + j] = acc[r][j] * scale;
    }
}

// q_t[d, r] = q_rows[r][d]:  kRows pointers to [dh]  ->  [dh, kRows]
inline void transpose_rows(const float* const* q_rows, std::size_t dh, float* q_t) {
    for (std::size_t d = 0; d < dh; ++d)
        for (std::size_t r = 0; r < kRows; ++r) q_t[d * kRows + r] = q_rows[r][d];
}

// The same scores with K read in place, for a tile that is the only reader of
// its keys (a decode step): copying K into panels would cost more than the
// products it saves. The tile's rows become the vector lanes instead:
//   q_t: [dh, kRows] (the tile's queries, transposed), k_head: [S, dh]
//   -> out: [kRows, kLaneKeys] scores against keys key0 .. key0 + kLaneKeys (row stride out_stride)
// kLaneKeys independent accumulators hide the multiply-add latency. Past the
// last key the block repeats key S - 1; its scores land in padding never read.
constexpr std::size_t kLaneKeys = 8;
inline void score_tile_in_place(const float* q_t, const float* k_head, std::size_t S, std::size_t key0,
                                std::size_t dh, float scale, float* out, std::size_t out_stride) {
    const float* k_rows[kLaneKeys];
    for (std::size_t j = 0; j < kLaneKeys; ++j) k_rows[j] = k_head + std::min(key0 + j, S - 1) * dh;
    float acc[kLaneKeys][kRows] = {};
    for (std::size_t d = 0; d < dh; ++d) {
        const float* q_d = q_t + d * kRows;
        for (std::size_t j = 0; j < kLaneKeys; ++j) {
            const float k_jd = k_rows[j][d];
            #pragma omp simd
            for (std::size_t r = 0; r < kRows; ++r) acc[j][r] += q_d[r] * k_jd;
        }
    }
    for (std::size_t r = 0; r < kRows; ++r)
        for (std::size_t j = 0; j < kLaneKeys; ++j) out[r * out_stride + j] = acc[j][r] * scale;
}

// o[r, d0 .. d0 + kDims) = init[r] * o[r, ...] + sum_{s < n} p[r, s] v[s, d0 .. d0 + kDims)
//   p: [kRows, n] (row stride p_stride), v: [n, dh] rows, o: kRows pointers to [dh]
inline void pv_tile(const float* p, std::size_t p_stride, const float* v, std::size_t n, std::size_t dh,
                    std::size_t d0, const float* init, float* const* o) {
    float acc[kRows][kDims];
    for (std::size_t r = 0; r < kRows; ++r) {
        #pragma omp simd
        for (std::size_t j = 0; j < kDims; ++j) acc[r][j] = init[r] * o[r][d0 + j];
    }
    for (std::size_t s = 0; s < n; ++s) {
        const float* v_s = v + s * dh + d0;
        for (std::size_t r = 0; r < kRows; ++r) {
            const float p_rs = p[r * p_stride + s];
            #pragma omp simd
            for (std::size_t j = 0; j < kDims; ++j) acc[r][j] += p_rs * v_s[j];
        }
    }
    for (std::size_t r = 0; r < kRows; ++r) {
        #pragma omp simd
        for (std::size_t j = 0; j < kDims; ++j) o[r][d0 + j] = acc[r][j];
    }
}

// The same for the last dh % kDims channels (only odd head sizes reach it).
inline void pv_tail(const float* p, std::size_t p_stride, const float* v, std::size_t n, std::size_t dh,
                    std::size_t d0, const float* init, float* const* o) {
    for (std::size_t r = 0; r < kRows; ++r)
        for (std::size_t d = d0; d < dh; ++d) {
            float acc = init[r] * o[r][d];
            for (std::size_t s = 0; s < n; ++s) acc += p[r * p_stride + s] * v[s * dh + d];
            o[r][d] = acc;
        }
}

// o += p @ v over all dh channels, tile by tile.
inline void pv_rows(const float* p, std::size_t p_stride, const float* v, std::size_t n, std::size_t dh,
                    const float* init, float* const* o) {
    std::size_t d0 = 0;
    for (; d0 + kDims <= dh; d0 += kDims) pv_tile(p, p_stride, v, n, dh, d0, init, o);
    if (d0 < dh) pv_tail(p, p_stride, v, n, dh, d0, init, o);
}

struct Shape {
    std::size_t B, Hq, Hkv, T, S, dh, group, history;
};

Shape shape_of(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v) {
    check_attention_shapes(q.shape(), k.shape(), v.shape());
    const std::size_t Hq = q.shape(1), Hkv = k.shape(1), T = q.shape(2), S = k.shape(2);
    return {q.shape(0), Hq, Hkv, T, S, q.shape(3), Hq / Hkv, S - T};
}

}  // namespace

const char* kernel_isa() { return kIsa; }

// kChains independent vectors, each updated acc = acc * a + b per round: enough
// chains in flight to cover the multiply-add latency on both vector pipes,
// few enough to stay in registers (16 of them with 128-bit SIMD).
constexpr std::size_t kChains = 12;

float multiply_add_rounds(std::size_t rounds, float x) {
    float acc[kChains][kLanes];  // [kChains, kLanes] register-resident
    for (std::size_t c = 0; c < kChains; ++c)
        for (std::size_t j = 0; j < kLanes; ++j) acc[c][j] = x + 0.01f * float(c) + 0.001f * float(j);
    const float a = 0.99999f, b = 1e-5f;  // a fixed point at 1: the values stay normal
    for (std::size_t round = 0; round < rounds; ++round)
        for (std::size_t c = 0; c < kChains; ++c) {
            #pragma omp simd
            for (std::size_t j = 0; j < kLanes; ++j) acc[c][j] = acc[c][j] * a + b;
        }
    float total = 0;
    for (std::size_t c = 0; c < kChains; ++c)
        for (std::size_t j = 0; j < kLanes; ++j) total += acc[c][j];
    return total;
}

double multiply_add_flops_per_round() { return 2.0 * kChains * kLanes; }

void check_attention_shapes(const std::array<std::size_t, 4>& q, const std::array<std::size_t, 4>& k,
                            const std::array<std::size_t, 4>& v) {
    if (k != v) throw InputError("attention: k and v must have the same shape [B, Hkv, S, dh]");
    if (q[0] != k[0] || q[3] != k[3]) throw InputError("attention: q and k disagree in batch or head size");
    if (k[1] == 0 || q[1] % k[1] != 0) throw InputError("attention: query heads must be a multiple of KV heads");
    if (k[2] < q[2]) throw InputError("attention: there must be at least as many keys as queries");
    if (q[3] == 0) throw InputError("attention: head size must be positive");
}

// ---- v0: the core's reference ----------------------------------------------------

template <typename Real>
Tensor4<Real> attention_reference(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& v,
                                  bool repeated_kv) {
    check_attention_shapes(q.shape(), k.shape(), v.shape());
    const std::size_t T = q.shape(2), S = k.shape(2);
    const Mask allowed = causal_mask(T, S);  // [T, S]
    if (repeated_kv) {
        const int group = int(q.shape(1) / k.shape(1));
        const Tensor4<Real> k_full = repeat_kv(k, group);  // [B, Hq, S, dh]
        const Tensor4<Real> v_full = repeat_kv(v, group);  // [B, Hq, S, dh]
        const Tensor4<Real> probs = softmax_rows(apply_mask(attention_scores(q, k_full), allowed));  // [B, Hq, T, S]
        return weighted_values(probs, v_full);
    }
    const Tensor4<Real> probs = softmax_rows(apply_mask(attention_scores(q, k), allowed));  // [B, Hq, T, S]
    return weighted_values(probs, v);
}

template Tensor4<float> attention_reference(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&, bool);
template Tensor4<double> attention_reference(const Tensor4<double>&, const Tensor4<double>&, const Tensor4<double>&,
                                             bool);

// ---- v1: one query row at a time ------------------------------------------------

Tensor4<float> attention_rows(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v) {
    const Shape sh = shape_of(q, k, v);
    const std::size_t dh = sh.dh;
    const float scale = float(1.0 / std::sqrt(double(dh)));
    Tensor4<float> out({sh.B, sh.Hq, sh.T, dh});
    float* scores = scratch(kScoreSlot, sh.S);  // [S] one row, reused
    for (std::size_t b = 0; b < sh.B; ++b)
        for (std::size_t h = 0; h < sh.Hq; ++h) {
            const float* k_head = &k(b, h / sh.group, 0, 0);  // [S, dh], shared by the group
            const float* v_head = &v(b, h / sh.group, 0, 0);  // [S, dh]
            for (std::size_t t = 0; t < sh.T; ++t) {
                const float* q_row = &q(b, h, t, 0);
                float* o = &out(b, h, t, 0);
                const std::size_t n = t + sh.history + 1;  // visible keys 0 .. n-1; the rest is never computed
                for (std::size_t s = 0; s < n; ++s) scores[s] = dot(q_row, k_head + s * dh, dh) * scale;
                const float l = exp_shifted(scores, n, max_of(scores, n));
                for (std::size_t d = 0; d < dh; ++d) o[d] = 0;
                for (std::size_t s = 0; s < n; ++s) {
                    const float p = scores[s];
                    const float* v_row = v_head + s * dh;
                    #pragma omp simd
                    for (std::size_t d = 0; d < dh; ++d) o[d] += p * v_row[d];
                }
                const float inv_l = 1.0f / l;
                for (std::size_t d = 0; d < dh; ++d) o[d] *= inv_l;
            }
        }
    return out;
}

// ---- v2: the query rows of a KV group as register tiles -----------------------------

Tensor4<float> attention_grouped(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v) {
    const Shape sh = shape_of(q, k, v);
    const std::size_t dh = sh.dh;
    const float scale = float(1.0 / std::sqrt(double(dh)));
    const std::size_t n_panels = (sh.S + kKeys - 1) / kKeys;
    const std::size_t stride = n_panels * kKeys;  // scores row stride (all keys, padded to a panel)
    Tensor4<float> out({sh.B, sh.Hq, sh.T, dh});
    // The rows reading one KV head, ordered (position t, head in group): with
    // TinyLlama's group of 8 a tile is the 8 heads at one position, which see the
    // same keys; with smaller groups a tile spans neighbouring positions.
    const std::size_t rows_total = sh.T * sh.group;
    // Register tiles share one transposed copy of the head's keys. When a single
    // tile reads the head (a decode step with TinyLlama's group of 8 and 8-row
    // AVX-512 tiles), the copy would cost more than it saves: it reads K in place
    // (score_tile_in_place). Two 4-row tiles (128-bit builds) are already faster
    // sharing the copy: wasm decode at S = 4096 took 1.49 ms so, 1.92 ms in place.
    const bool pack_whole_head = rows_total > kRows;
    float* panels = pack_whole_head ? scratch(kPanelSlot, n_panels * dh * kKeys) : nullptr;  // [n_panels, dh, kKeys]
    std::vector<float> q_t(kRows * dh);  // [dh, kRows] a tile's queries, transposed (in-place path)
    float* scores = scratch(kScoreSlot, kRows * stride);  // [kRows, stride] scores, then weights
    std::vector<float> spare(kRows * dh);       // outputs of the padding rows of a short tile
    const float zero[kRows] = {};
    for (std::size_t b = 0; b < sh.B; ++b)
        for (std::size_t g = 0; g < sh.Hkv; ++g) {
            const float* k_head = &k(b, g, 0, 0);  // [S, dh]
            const float* v_head = &v(b, g, 0, 0);  // [S, dh]
            if (pack_whole_head) pack_key_panels(k_head, sh.S, dh, panels);
            for (std::size_t row0 = 0; row0 < rows_total; row0 += kRows) {
                const float* q_rows[kRows];
                float* o_rows[kRows];
                std::size_t visible[kRows];  // keys row r may see: t + history + 1
                for (std::size_t r = 0; r < kRows; ++r) {
                    const std::size_t i = std::min(row0 + r, rows_total - 1);  // a short tile repeats its last row
                    const std::size_t t = i / sh.group, h = g * sh.group + i % sh.group;
                    q_rows[r] = &q(b, h, t, 0);
                    o_rows[r] = row0 + r < rows_total ? &out(b, h, t, 0) : spare.data() + r * dh;
                    visible[r] = t + sh.history + 1;
                }
                const std::size_t n = *std::max_element(visible, visible + kRows);  // keys the tile reads
                if (pack_whole_head) {
                    for (std::size_t p = 0; p * kKeys < n; ++p)
                        score_tile(q_rows, panels + p * dh * kKeys, dh, scale, scores + p * kKeys, stride);
                } else {
                    transpose_rows(q_rows, dh, q_t.data());
                    for (std::size_t key0 = 0; key0 < n; key0 += kLaneKeys)
                        score_tile_in_place(q_t.data(), k_head, sh.S, key0, dh, scale, scores + key0, stride);
                }
                float inv_l[kRows];
                for (std::size_t r = 0; r < kRows; ++r) {
                    float* row = scores + r * stride;
                    inv_l[r] = 1.0f / exp_shifted(row, visible[r], max_of(row, visible[r]));
                    for (std::size_t s = visible[r]; s < n; ++s) row[s] = 0;  // masked: weight 0, never exp'd
                    for (std::size_t d = 0; d < dh; ++d) o_rows[r][d] = 0;
                }
                pv_rows(scores, stride, v_head, n, dh, zero, o_rows);
                for (std::size_t r = 0; r < kRows; ++r)
                    for (std::size_t d = 0; d < dh; ++d) o_rows[r][d] *= inv_l[r];
            }
        }
    return out;
}

// ---- v3: streaming (online softmax over key blocks) ---------------------------------

Tensor4<float> attention_streaming(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v) {
    const Shape sh = shape_of(q, k, v);
    const std::size_t dh = sh.dh;
    const float scale = float(1.0 / std::sqrt(double(dh)));
    const float neg_inf = -std::numeric_limits<float>::infinity();
    Tensor4<float> out({sh.B, sh.Hq, sh.T, dh});

    // A tile: kTileRows (Br) query rows of one KV head, ordered (position, head in
    // group), walked against key blocks of kBlockKeys (Bc); inside it, register
    // tiles of kRows rows. Scratch is O(Br x (Bc + dh)), whatever T and S are,
    // plus the transposed copy of one KV head's keys when enough rows share it
    // (a single register tile per KV head reads K in place, as in v2).
    const std::size_t rows_total = sh.T * sh.group;  // per (b, KV head)
    const bool pack_whole_head = rows_total > kRows;
    const std::size_t n_panels = (sh.S + kKeys - 1) / kKeys;
    float* panels = pack_whole_head ? scratch(kPanelSlot, n_panels * dh * kKeys) : nullptr;  // [n_panels, dh, kKeys]
    std::vector<float> q_t(kRows * dh);  // [dh, kRows] a register tile's queries, transposed (in-place path)
    std::vector<float> o_tile(kTileRows * dh);        // [Br, dh] unnormalised output O
    std::vector<float> m(kTileRows), l(kTileRows);    // [Br] running max and running sum
    float* s_tile = scratch(kScoreSlot, kRows * kBlockKeys);  // [kRows, Bc] scores, then weights P
    std::vector<float> spare(kRows * dh, 0.0f);       // O of the padding rows of a short tile

    for (std::size_t b = 0; b < sh.B; ++b)
        for (std::size_t g = 0; g < sh.Hkv; ++g) {
            const float* k_head = &k(b, g, 0, 0);  // [S, dh]
            const float* v_head = &v(b, g, 0, 0);  // [S, dh]
            if (pack_whole_head) pack_key_panels(k_head, sh.S, dh, panels);
            for (std::size_t row0 = 0; row0 < rows_total; row0 += kTileRows) {
                const std::size_t rows = std::min(kTileRows, rows_total - row0);
                std::fill(o_tile.begin(), o_tile.end(), 0.0f);
                std::fill(m.begin(), m.end(), neg_inf);
                std::fill(l.begin(), l.end(), 0.0f);
                // The tile's last row sees the most keys; blocks past them are skipped entirely.
                const std::size_t n_tile = (row0 + rows - 1) / sh.group + sh.history + 1;
                for (std::size_t key0 = 0; key0 < n_tile; key0 += kBlockKeys) {
                    const std::size_t keys_here = std::min(kBlockKeys, sh.S - key0);  // real keys in the block
                    for (std::size_t r0 = 0; r0 < rows; r0 += kRows) {
                        const float* q_rows[kRows];
                        float* o_rows[kRows];
                        std::size_t visible[kRows];  // keys of this block row r may see
                        std::size_t block_visible = 0;
                        for (std::size_t r = 0; r < kRows; ++r) {
                            const std::size_t i = std::min(r0 + r, rows - 1);  // a short tile repeats its last row
                            const std::size_t t = (row0 + i) / sh.group, h = g * sh.group + (row0 + i) % sh.group;
                            q_rows[r] = &q(b, h, t, 0);
                            // A padding row must not write over the real row it repeats.
                            o_rows[r] = r0 + r < rows ? o_tile.data() + i * dh : spare.data() + r * dh;
                            const std::size_t n = t + sh.history + 1;
                            visible[r] = r0 + r >= rows || n <= key0 ? 0 : std::min(keys_here, n - key0);
                            block_visible = std::max(block_visible, visible[r]);
                        }
                        if (block_visible == 0) continue;  // the register tile is above the diagonal
                        if (pack_whole_head) {
                            for (std::size_t p = 0; p * kKeys < block_visible; ++p)
                                score_tile(q_rows, panels + (key0 / kKeys + p) * dh * kKeys, dh, scale,
                                           s_tile + p * kKeys, kBlockKeys);
                        } else {
                            transpose_rows(q_rows, dh, q_t.data());
                            for (std::size_t j0 = 0; j0 < block_visible; j0 += kLaneKeys)
                                score_tile_in_place(q_t.data(), k_head, sh.S, key0 + j0, dh, scale, s_tile + j0,
                                                    kBlockKeys);
                        }
                        float alpha[kRows];  // rescales the old O and l: exp(m_old - m_new)
                        for (std::size_t r = 0; r < kRows; ++r) {
                            float* s_r = s_tile + r * kBlockKeys;
                            alpha[r] = 1;
                            if (visible[r] > 0) {
                                const std::size_t i = r0 + r;
                                const float m_new = std::max(m[i], max_of(s_r, visible[r]));
                                alpha[r] = m[i] == neg_inf ? 0.0f : exponential(m[i] - m_new);
                                l[i] = l[i] * alpha[r] + exp_shifted(s_r, visible[r], m_new);
                                m[i] = m_new;
                            }
                            for (std::size_t j = visible[r]; j < block_visible; ++j) s_r[j] = 0;  // masked: weight 0
                        }
                        pv_rows(s_tile, kBlockKeys, v_head + key0 * dh, block_visible, dh, alpha, o_rows);
                    }
                }
                for (std::size_t i = 0; i < rows; ++i) {
                    const std::size_t t = (row0 + i) / sh.group, h = g * sh.group + (row0 + i) % sh.group;
                    const float inv_l = 1.0f / l[i];
                    float* o = &out(b, h, t, 0);
                    for (std::size_t d = 0; d < dh; ++d) o[d] = o_tile[i * dh + d] * inv_l;
                }
            }
        }
    return out;
}

}  // namespace anatomy
