#include "heads.hpp"

#include <algorithm>

#include <xtensor/xview.hpp>

namespace anatomy {

// [anatomy:split_heads]
template <typename Real>
Tensor4<Real> split_heads(const Tensor3<Real>& x, int n_heads) {
    const std::size_t B = x.shape(0), T = x.shape(1), H = std::size_t(n_heads);
    const std::size_t dh = x.shape(2) / H;
    // Reshape [B, T, H*dh] -> [B, T, H, dh], then swap T and H: head h of position t is
    // the dh channels h*dh .. (h+1)*dh - 1 of x[b, t].
    Tensor4<Real> out = Tensor4<Real>::from_shape({B, H, T, dh});  // [B, H, T, dh]
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t h = 0; h < H; ++h) std::copy_n(&x(b, t, h * dh), dh, &out(b, h, t, 0));
    return out;
}
// [/anatomy:split_heads]

// [anatomy:merge_heads]
template <typename Real>
Tensor3<Real> merge_heads(const Tensor4<Real>& x) {
    const std::size_t B = x.shape(0), H = x.shape(1), T = x.shape(2), dh = x.shape(3);
    // split_heads undone: swap H and T back, then lay each position's heads side by side.
    Tensor3<Real> out = Tensor3<Real>::from_shape({B, T, H * dh});  // [B, T, H*dh]
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t h = 0; h < H; ++h) std::copy_n(&x(b, h, t, 0), dh, &out(b, t, h * dh));
    return out;
}
// [/anatomy:merge_heads]

// [anatomy:repeat_kv]
template <typename Real>
Tensor4<Real> repeat_kv(const Tensor4<Real>& kv, int group) {
    const std::size_t B = kv.shape(0), Hkv = kv.shape(1), S = kv.shape(2), dh = kv.shape(3);
    const std::size_t Hq = Hkv * std::size_t(group);
    Tensor4<Real> out({B, Hq, S, dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h)
            xt::view(out, b, h) = xt::view(kv, b, h / std::size_t(group));
    return out;
}
// [/anatomy:repeat_kv]

template Tensor4<float> split_heads(const Tensor3<float>&, int);
template Tensor4<double> split_heads(const Tensor3<double>&, int);
template Tensor3<float> merge_heads(const Tensor4<float>&);
template Tensor3<double> merge_heads(const Tensor4<double>&);
template Tensor4<float> repeat_kv(const Tensor4<float>&, int);
template Tensor4<double> repeat_kv(const Tensor4<double>&, int);

}  // namespace anatomy
