#include "kv_eviction.hpp"

#include <algorithm>
#include <vector>

#include "../ops/rope.hpp"

namespace anatomy {

std::string to_string(EvictionPolicy policy) {
    switch (policy) {
        case EvictionPolicy::keep_all: return "keep_all";
        case EvictionPolicy::sliding_window: return "sliding_window";
        case EvictionPolicy::sinks_and_window: return "sinks_and_window";
    }
    return "";
}

void require_sinks_inside_window(std::size_t window, std::size_t sinks) {
    if (sinks >= window)
        throw InputError("the sinks K = " + std::to_string(sinks) + " must be fewer than the window W = " + std::to_string(window) +
                         " (the sinks are kept inside the window)");
}

void require_valid(const EvictionSpec& spec) {
    if (spec.policy == EvictionPolicy::keep_all) return;
    if (spec.window == 0) throw InputError("the window must hold at least 1 entry");
    if (spec.policy == EvictionPolicy::sinks_and_window) require_sinks_inside_window(spec.window, spec.sinks);
}

template <typename Real>
Tensor4<Real> drop_row(const Tensor4<Real>& x, std::size_t row) {
    const std::size_t B = x.shape(0), H = x.shape(1), S = x.shape(2), dh = x.shape(3);
    if (row >= S) throw InputError("drop_row: row " + std::to_string(row) + " of " + std::to_string(S));
    Tensor4<Real> out = Tensor4<Real>::from_shape({B, H, S - 1, dh});
    Real* to = out.data();
    for (std::size_t bh = 0; bh < B * H; ++bh) {  // each (b, h): rows before `row`, then rows after it
        const Real* from = x.data() + bh * S * dh;
        to = std::copy_n(from, row * dh, to);
        to = std::copy_n(from + (row + 1) * dh, (S - row - 1) * dh, to);
    }
    return out;
}

template <typename Real>
Tensor4<Real> rotate_back(const Tensor4<Real>& keys, std::size_t first, std::int64_t shift, const ModelConfig& c) {
    const std::size_t B = keys.shape(0), H = keys.shape(1), S = keys.shape(2), dh = keys.shape(3);
    if (first >= S || shift == 0) return keys;
    // Every key turned by the same angle: seen as B*H*S sequences of one token at position
    // -shift, so apply_rope computes that angle's cosines and sines once, not once per row.
    Tensor4<Real> rows = keys;
    rows.reshape({B * H * S, 1, 1, dh});
    Tensor4<Real> out = apply_rope(rows, {-shift}, c.rope_theta, c.rope_pairing);
    out.reshape({B, H, S, dh});
    // Rows before `first` stay as they were (copied back, not turned).
    for (std::size_t bh = 0; bh < B * H; ++bh)
        std::copy_n(keys.data() + bh * S * dh, first * dh, out.data() + bh * S * dh);
    return out;
}

template <typename Real>
std::size_t evict_for(KVCache<Real>& cache, const EvictionSpec& spec, std::size_t incoming, const ModelConfig& c) {
    require_valid(spec);
    if (spec.policy == EvictionPolicy::keep_all) return 0;
    const std::size_t keep_first = spec.policy == EvictionPolicy::sinks_and_window ? spec.sinks : 0;
    if (incoming > spec.window - keep_first)
        throw InputError(std::to_string(incoming) + " new tokens do not fit a window of " + std::to_string(spec.window) +
                         (keep_first ? " with " + std::to_string(keep_first) + " sinks" : ""));
    std::size_t evicted = 0;
    while (std::size_t(cache.position) + incoming > spec.window) {
        // The oldest entry after the kept ones goes; every later key moves one slot earlier.
        for (std::size_t l = 0; l < cache.keys.size(); ++l) {
            cache.keys[l] = rotate_back(drop_row(cache.keys[l], keep_first), keep_first, 1, c);
            cache.values[l] = drop_row(cache.values[l], keep_first);
        }
        cache.position -= 1;
        ++evicted;
    }
    return evicted;
}

template Tensor4<float> drop_row(const Tensor4<float>&, std::size_t);
template Tensor4<double> drop_row(const Tensor4<double>&, std::size_t);
template Tensor4<float> rotate_back(const Tensor4<float>&, std::size_t, std::int64_t, const ModelConfig&);
template Tensor4<double> rotate_back(const Tensor4<double>&, std::size_t, std::int64_t, const ModelConfig&);
template std::size_t evict_for(KVCache<float>&, const EvictionSpec&, std::size_t, const ModelConfig&);
template std::size_t evict_for(KVCache<double>&, const EvictionSpec&, std::size_t, const ModelConfig&);

}  // namespace anatomy
