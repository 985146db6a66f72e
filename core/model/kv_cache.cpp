#include "kv_cache.hpp"

#include <algorithm>

namespace anatomy {

template <typename Real>
std::size_t KVCache<Real>::stored_scalars() const {
    std::size_t total = 0;
    for (const Tensor4<Real>& k : keys) total += k.size();
    for (const Tensor4<Real>& v : values) total += v.size();
    return total;
}

// [anatomy:kv_cache]
template <typename Real>
KVCache<Real> empty_cache(const ModelConfig& config, std::size_t batch) {
    KVCache<Real> cache;
    const std::array<std::size_t, 4> shape{batch, std::size_t(config.n_kv_heads), 0, std::size_t(config.head_dim)};
    cache.keys.assign(std::size_t(config.n_layers), Tensor4<Real>(shape));
    cache.values.assign(std::size_t(config.n_layers), Tensor4<Real>(shape));
    return cache;
}

template <typename Real>
Tensor4<Real> append_rows(const Tensor4<Real>& cached, const Tensor4<Real>& fresh) {
    const std::size_t B = fresh.shape(0), H = fresh.shape(1), S = cached.shape(2), T = fresh.shape(2), dh = fresh.shape(3);
    if (cached.shape(0) != B || cached.shape(1) != H || cached.shape(3) != dh)
        throw InputError("append_rows: the cache and the new rows differ in batch, heads or head size");
    // Each (b, h)'s rows are contiguous in both: the S cached ones, then the T new ones.
    // (xt::concatenate copies element by element through its steppers: 6% of a wasm training step.)
    Tensor4<Real> out = Tensor4<Real>::from_shape({B, H, S + T, dh});
    Real* to = out.data();
    for (std::size_t bh = 0; bh < B * H; ++bh) {
        to = std::copy_n(cached.data() + bh * S * dh, S * dh, to);
        to = std::copy_n(fresh.data() + bh * T * dh, T * dh, to);
    }
    return out;
}
// [/anatomy:kv_cache]

template struct KVCache<float>;
template struct KVCache<double>;
template KVCache<float> empty_cache(const ModelConfig&, std::size_t);
template KVCache<double> empty_cache(const ModelConfig&, std::size_t);
template Tensor4<float> append_rows(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> append_rows(const Tensor4<double>&, const Tensor4<double>&);

}  // namespace anatomy
