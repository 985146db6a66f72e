#include "kv_cache.hpp"

#include <xtensor/xbuilder.hpp>

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
    return xt::concatenate(xt::xtuple(cached, fresh), 2);
}
// [/anatomy:kv_cache]

template struct KVCache<float>;
template struct KVCache<double>;
template KVCache<float> empty_cache(const ModelConfig&, std::size_t);
template KVCache<double> empty_cache(const ModelConfig&, std::size_t);
template Tensor4<float> append_rows(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> append_rows(const Tensor4<double>&, const Tensor4<double>&);

}  // namespace anatomy
