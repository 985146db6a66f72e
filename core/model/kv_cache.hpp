// The per-layer key/value cache. Each layer keeps the keys (after RoPE) and the
// values of every token processed so far, so a new token computes only its own
// q, k, v and attends to the stored history.
#pragma once

#include <cstdint>
#include <vector>

#include "../tensor.hpp"
#include "model_config.hpp"

namespace anatomy {

template <typename Real>
struct KVCache {
    std::vector<Tensor4<Real>> keys;    // per layer: [B, Hkv, S, dh], RoPE already applied
    std::vector<Tensor4<Real>> values;  // per layer: [B, Hkv, S, dh]
    std::int64_t position = 0;          // S, tokens cached per sequence = the next token's position

    std::size_t batch() const { return keys.empty() ? 0 : keys[0].shape(0); }
    // Scalars stored across all layers, keys and values: 2 * L * B * Hkv * S * dh.
    std::size_t stored_scalars() const;
};

// A cache for `batch` sequences with nothing in it yet (S = 0).
template <typename Real>
KVCache<Real> empty_cache(const ModelConfig& config, std::size_t batch);

// Append T new rows along the sequence axis.
//   cached: [B, Hkv, S, dh], fresh: [B, Hkv, T, dh]  ->  [B, Hkv, S + T, dh]
template <typename Real>
Tensor4<Real> append_rows(const Tensor4<Real>& cached, const Tensor4<Real>& fresh);

}  // namespace anatomy
