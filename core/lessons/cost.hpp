// What one attention layer costs, counted as floating-point operations
// (a multiply-add is 2 FLOPs), for one sequence.
#pragma once

#include <cstdint>

namespace anatomy {

struct AttentionFlops {
    double projections = 0;  // Q, K, V, O: 2*T*d*(d + d_kv + d_kv + d); 8*T*d^2 without GQA
    double scores = 0;       // Q K^T over all query heads: 2 * T * S * d
    double weighted = 0;     // P V over all query heads:   2 * T * S * d
};

// Prefill: T queries attending to S = T keys (no mask discount), model width d,
// Hq query heads and Hkv KV heads (d_kv = d * Hkv / Hq).
AttentionFlops prefill_flops(double d, double T, int n_heads, int n_kv_heads);

// Decode: one new query attending to a cache of S keys.
AttentionFlops decode_flops(double d, double S, int n_heads, int n_kv_heads);

// The sequence length where scores + weighted (4 T^2 d) equal the projections:
// 4 T^2 d = 2 T d (2d + 2 d_kv)  =>  T = d + d_kv  (= 2d without GQA).
double crossover_length(double d, int n_heads, int n_kv_heads);

// Bytes of K and V one decode step reads from the cache, for one layer:
// 2 * S * d_kv * bytes_per_scalar.
double decode_cache_bytes(double d, double S, int n_heads, int n_kv_heads, int bytes_per_scalar);

}  // namespace anatomy
