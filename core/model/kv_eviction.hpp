// A KV cache that holds at most W entries per layer, as a model decoding a long text
// must: when a new token would make W + 1, one entry is evicted first. Three policies
// (StreamingLLM, Xiao et al. 2023, compares the same ones):
//
//   keep_all          nothing is evicted; positions run past W (and past what the
//                     model was trained on, when the text is long enough)
//   sliding_window    the oldest entry goes
//   sinks_and_window  the first K entries stay for good (the attention sinks); the
//                     oldest after them goes
//
// Positions are the entries' places in the cache, as StreamingLLM assigns them: the
// entry in slot j was rotated by RoPE for position j, and the next token gets
// position W - 1 (the cache's size after the eviction), so no query and key are ever
// further apart than W - 1. The cache stores keys after RoPE, so when an entry moves
// from slot j to slot j - 1 its key is turned back by one position: RoPE's rotation
// by -1, R(-1) R(j) = R(j - 1) (ops/rope.hpp), applied to every key after the evicted
// one. Values carry no position and only move.
#pragma once

#include <cstddef>
#include <string>

#include "kv_cache.hpp"

namespace anatomy {

enum class EvictionPolicy { keep_all, sliding_window, sinks_and_window };

struct EvictionSpec {
    EvictionPolicy policy = EvictionPolicy::keep_all;
    std::size_t window = 0;  // W: the most entries the cache holds (ignored by keep_all)
    std::size_t sinks = 0;   // K: the first entries sinks_and_window never evicts (K < W)
};

std::string to_string(EvictionPolicy policy);  // "keep_all", "sliding_window", "sinks_and_window"

// Throws InputError unless the K sinks fit inside a window of W entries (K < W), naming
// both: the one check of this rule, which require_valid, stream_report, attn stream
// (prefixing its flags) and the page's StreamingLLM widget (through the wasm session's
// check and {"error"}) all show in these words.
void require_sinks_inside_window(std::size_t window, std::size_t sinks);

// Throws InputError for a window of 0 or sinks that leave no room for the window (K >= W).
void require_valid(const EvictionSpec& spec);

// Before `incoming` (1 or more) new tokens per sequence are appended: evicts what the
// policy must so that the cache then holds at most W entries, re-rotating each key
// that moves and setting the cache's position to the entries left (the next token's
// position). Returns how many entries it evicted. keep_all evicts nothing. Throws
// InputError when `incoming` alone exceeds what the policy can make room for.
//   cache: per layer keys, values [B, Hkv, S, dh]  ->  [B, Hkv, S', dh], S' + incoming <= W
template <typename Real>
std::size_t evict_for(KVCache<Real>& cache, const EvictionSpec& spec, std::size_t incoming, const ModelConfig& config);

// Drops row `row` of every (b, h); the rows after it move one slot earlier, unchanged.
//   x: [B, H, S, dh] -> [B, H, S - 1, dh]
template <typename Real>
Tensor4<Real> drop_row(const Tensor4<Real>& x, std::size_t row);

// Rows from `first` on, rotated by RoPE for position -shift (each moved `shift` slots earlier).
//   keys: [B, H, S, dh] -> [B, H, S, dh]
template <typename Real>
Tensor4<Real> rotate_back(const Tensor4<Real>& keys, std::size_t first, std::int64_t shift, const ModelConfig& config);

}  // namespace anatomy
