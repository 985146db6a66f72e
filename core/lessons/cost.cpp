#include "cost.hpp"

namespace anatomy {
namespace {

// Width of K (and of V): the KV heads' share of the model width.
double kv_width(double d, int n_heads, int n_kv_heads) { return d * n_kv_heads / n_heads; }

}  // namespace

AttentionFlops prefill_flops(double d, double T, int n_heads, int n_kv_heads) {
    const double d_kv = kv_width(d, n_heads, n_kv_heads);
    return {2 * T * d * (2 * d + 2 * d_kv), 2 * T * T * d, 2 * T * T * d};
}

AttentionFlops decode_flops(double d, double S, int n_heads, int n_kv_heads) {
    const double d_kv = kv_width(d, n_heads, n_kv_heads);
    return {2 * d * (2 * d + 2 * d_kv), 2 * S * d, 2 * S * d};
}

double crossover_length(double d, int n_heads, int n_kv_heads) { return d + kv_width(d, n_heads, n_kv_heads); }

double decode_cache_bytes(double d, double S, int n_heads, int n_kv_heads, int bytes_per_scalar) {
    return 2 * S * kv_width(d, n_heads, n_kv_heads) * bytes_per_scalar;
}

}  // namespace anatomy
