// The bookkeeping of decode version 2 (`decode_group`, attention_decode.cu), as
// small functions usable on the host and the device, so that a CPU test
// (tests/cuda/test_gpu_decode_plan.cpp) can hold them to the core without a GPU,
// as test_gpu_masks.cpp does for the mask predicates.
//
// decode_group: one new query per sequence (T = 1) over S cached keys. One block
// per (sequence b, KV head, split) serves all G = Hq / Hkv query heads that read
// that KV head, so every cached key and value is read from memory once, not G times.
//   grid: x = splits, y = B * Hkv (row = b * Hkv + kv_head);  block: 8 warps.
//   A key row of D channels is read by D / e lanes, 16 bytes (e channels) each
//   (e = 8 for bf16, 4 for fp32), so a warp reads 32 e / D keys at once and a
//   block `slots` = 8 x 32 e / D keys; slot j reads keys begin + j, begin + j + slots, ...
//   Scores are kept in the log2 domain: q arrives scaled by log2(e) / sqrt(D), and
//   exp(x - m) is computed as exp2(x' - m').
// Each block reduces its keys to one partial softmax state per query head (m, l,
// O unnormalised) and writes it to
//   partial_out [B * Hkv, splits, G, D]   partial_ml [B * Hkv, splits, G, 2]
// then counts itself in arrivals[row]; the last block of a row to arrive merges
// the row's `splits` states:
//   M = max_i m_i,  L = sum_i l_i 2^(m_i - M),  out = sum_i O_i 2^(m_i - M) / L
// and sets arrivals[row] back to 0 for the next call.
#pragma once

#include <math.h>

#include "cuda/attention_mask.hpp"  // ANATOMY_HOST_DEVICE

namespace anatomy::gpu {

constexpr int kGroupDecodeWarps = 8;
constexpr int kGroupDecodeThreads = 32 * kGroupDecodeWarps;
constexpr int kGroupDecodeLoadBytes = 16;  // one load per lane per key row
constexpr int kGroupDecodeMaxGroup = 8;    // G = Hq / Hkv compiled: 1, 2, 4, 8

// How the S keys of one (b, KV head) are cut into chunks, one block each.
struct DecodePlan {
    int splits = 1;            // chunks per (b, KV head): grid x
    int keys_per_split = 128;  // 128 or 256
};

// 256 keys a block when the grid still has two blocks per multiprocessor, else 128.
inline DecodePlan decode_group_plan(int B, int Hkv, int S, int multiprocessors) {
    const long long rows = 1LL * B * Hkv;
    DecodePlan plan;
    plan.keys_per_split = rows * ((S + 255) / 256) >= 2LL * multiprocessors ? 256 : 128;
    plan.splits = (S + plan.keys_per_split - 1) / plan.keys_per_split;
    if (plan.splits < 1) plan.splits = 1;
    return plan;
}

// Keys [split_begin, split_end) of chunk `split`.
ANATOMY_HOST_DEVICE int split_begin(const DecodePlan& plan, int split) { return split * plan.keys_per_split; }
ANATOMY_HOST_DEVICE int split_end(const DecodePlan& plan, int split, int S) {
    const int end = (split + 1) * plan.keys_per_split;
    return end < S ? end : S;
}

// Which lanes read what, for head size D and element size `element_bytes`.
template <int D, int element_bytes>
struct DecodeLanes {
    static constexpr int channels = kGroupDecodeLoadBytes / element_bytes;  // e: channels per lane
    static constexpr int lanes_per_key = D / channels;                      // lanes sharing one key row
    static constexpr int keys_per_warp = 32 / lanes_per_key;
    static constexpr int slots = kGroupDecodeWarps * keys_per_warp;          // keys a block reads at once
    static_assert(D % channels == 0 && lanes_per_key >= 1 && lanes_per_key <= 32 && 32 % lanes_per_key == 0,
                  "a key row must be 1 to 32 lanes of 16 bytes, a power of two");
    // Thread `thread` of the block: its slot (which keys) and its first channel.
    ANATOMY_HOST_DEVICE static int slot_of(int thread) {
        return (thread / 32) * keys_per_warp + (thread % 32) / lanes_per_key;
    }
    ANATOMY_HOST_DEVICE static int channel_of(int thread) { return (thread % 32) % lanes_per_key * channels; }
};

// Key read by `slot` at step `step` of chunk [begin, end), or -1 past the chunk's end.
ANATOMY_HOST_DEVICE int slot_key(int begin, int end, int slots, int slot, int step) {
    const int key = begin + slot + step * slots;
    return key < end ? key : -1;
}

// Index of the partial state of query head g (of the row's group) from chunk `split`.
ANATOMY_HOST_DEVICE long long partial_state(int row, int split, int g, int splits, int G) {
    return (1LL * row * splits + split) * G + g;
}

// ---- online softmax in the log2 domain ----------------------------------------
// One state: running maximum m, running sum l of 2^(x - m), output acc = sum 2^(x - m) v.
// m = -inf means no key yet.

// Adds key score x (log2 domain, visible) with value row `value`: one exp2 per key.
template <int N>
ANATOMY_HOST_DEVICE void softmax_push(float& m, float& l, float (&acc)[N], float x, const float (&value)[N]) {
    if (x > m) {  // a new maximum: rescale what is there (0 when m = -inf)
        const float c = exp2f(m - x);
        l = l * c + 1.0f;
        for (int n = 0; n < N; ++n) acc[n] = acc[n] * c + value[n];
        m = x;
    } else {
        const float p = exp2f(x - m);
        l += p;
        for (int n = 0; n < N; ++n) acc[n] += p * value[n];
    }
}

// Merges state (m2, l2, acc2) into (m, l, acc). A state with m = -inf adds nothing.
template <int N>
ANATOMY_HOST_DEVICE void softmax_merge(float& m, float& l, float (&acc)[N], float m2, float l2, const float (&acc2)[N]) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) {
        m = m2;
        l = l2;
        for (int n = 0; n < N; ++n) acc[n] = acc2[n];
        return;
    }
    const float top = fmaxf(m, m2), a = exp2f(m - top), b = exp2f(m2 - top);
    l = l * a + l2 * b;
    for (int n = 0; n < N; ++n) acc[n] = acc[n] * a + acc2[n] * b;
    m = top;
}

// The weight of chunk state (m_i) in the merged row: 2^(m_i - M) / L; 0 for an empty chunk.
ANATOMY_HOST_DEVICE float split_weight(float m_i, float M, float inv_L) {
    return m_i == -INFINITY ? 0.0f : exp2f(m_i - M) * inv_L;
}

}  // namespace anatomy::gpu
