#include "attention.hpp"

#include <cmath>
#include <limits>

namespace anatomy {
namespace {

// [anatomy:kv_group]
// Query heads per KV head; throws when the head counts do not divide.
std::size_t kv_group(std::size_t n_query_heads, std::size_t n_kv_heads) {
    if (n_kv_heads == 0 || n_query_heads % n_kv_heads != 0)
        throw InputError("attention: query heads must be a multiple of KV heads");
    return n_query_heads / n_kv_heads;
}
// [/anatomy:kv_group]

}  // namespace

// [anatomy:causal_mask]
Mask causal_mask(std::size_t T, std::size_t S) {
    if (S < T) throw InputError("causal_mask: there must be at least as many keys as queries");
    const std::size_t history = S - T;
    Mask allowed({T, S});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t s = 0; s < S; ++s) allowed(t, s) = causal_allows(t, s, history);
    return allowed;
}
// [/anatomy:causal_mask]

// [anatomy:attention_scores]
template <typename Real>
Tensor4<Real> attention_scores(const Tensor4<Real>& q, const Tensor4<Real>& k) {
    const std::size_t B = q.shape(0), Hq = q.shape(1), T = q.shape(2), dh = q.shape(3);
    const std::size_t Hkv = k.shape(1), S = k.shape(2);
    if (k.shape(0) != B || k.shape(3) != dh) throw InputError("attention_scores: q and k disagree in shape");
    const std::size_t group = kv_group(Hq, Hkv);
    const Real scale = Real(1.0 / std::sqrt(double(dh)));

    Tensor4<Real> scores({B, Hq, T, S});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const Real* k_head = &k(b, h / group, 0, 0);  // GQA: shared KV head, read in place
            for (std::size_t t = 0; t < T; ++t) {
                const Real* q_row = &q(b, h, t, 0);
                Real* out = &scores(b, h, t, 0);
                for (std::size_t s = 0; s < S; ++s) {
                    const Real* k_row = k_head + s * dh;
                    Real dot = 0;
                    for (std::size_t d = 0; d < dh; ++d) dot += q_row[d] * k_row[d];
                    out[s] = dot * scale;
                }
            }
        }
    return scores;
}
// [/anatomy:attention_scores]

// [anatomy:apply_mask]
template <typename Real>
Tensor4<Real> apply_mask(const Tensor4<Real>& scores, const Mask& allowed) {
    const std::size_t T = scores.shape(2), S = scores.shape(3);
    if (allowed.shape(0) != T || allowed.shape(1) != S) throw InputError("apply_mask: mask shape differs from scores");
    const std::size_t planes = scores.shape(0) * scores.shape(1);
    Tensor4<Real> masked = scores;
    for (std::size_t p = 0; p < planes; ++p) {
        Real* plane = masked.data() + p * T * S;
        for (std::size_t i = 0; i < T * S; ++i)
            if (!allowed.data()[i]) plane[i] = -std::numeric_limits<Real>::infinity();
    }
    return masked;
}
// [/anatomy:apply_mask]

// [anatomy:softmax_rows]
template <typename Real>
Tensor4<Real> softmax_rows(const Tensor4<Real>& x) {
    const std::size_t S = x.shape(3);
    const std::size_t rows = x.size() / (S ? S : 1);
    Tensor4<Real> probs(x.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* in = x.data() + r * S;
        Real* out = probs.data() + r * S;
        Real row_max = -std::numeric_limits<Real>::infinity();
        for (std::size_t s = 0; s < S; ++s) row_max = std::max(row_max, in[s]);
        if (row_max == -std::numeric_limits<Real>::infinity()) {
            for (std::size_t s = 0; s < S; ++s) out[s] = 0;
            continue;
        }
        Real sum = 0;
        for (std::size_t s = 0; s < S; ++s) {
            out[s] = std::exp(in[s] - row_max);  // exp(-inf) = 0 for forbidden cells
            sum += out[s];
        }
        for (std::size_t s = 0; s < S; ++s) out[s] /= sum;
    }
    return probs;
}
// [/anatomy:softmax_rows]

// [anatomy:weighted_values]
template <typename Real>
Tensor4<Real> weighted_values(const Tensor4<Real>& probs, const Tensor4<Real>& v) {
    const std::size_t B = probs.shape(0), Hq = probs.shape(1), T = probs.shape(2), S = probs.shape(3);
    const std::size_t Hkv = v.shape(1), dh = v.shape(3);
    if (v.shape(0) != B || v.shape(2) != S) throw InputError("weighted_values: probs and v disagree in shape");
    const std::size_t group = kv_group(Hq, Hkv);

    Tensor4<Real> out = xt::zeros<Real>({B, Hq, T, dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const Real* v_head = &v(b, h / group, 0, 0);
            for (std::size_t t = 0; t < T; ++t) {
                const Real* p_row = &probs(b, h, t, 0);
                Real* o = &out(b, h, t, 0);
                for (std::size_t s = 0; s < S; ++s) {
                    const Real p = p_row[s];
                    const Real* v_row = v_head + s * dh;
                    for (std::size_t d = 0; d < dh; ++d) o[d] += p * v_row[d];
                }
            }
        }
    return out;
}
// [/anatomy:weighted_values]

template Tensor4<float> attention_scores(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> attention_scores(const Tensor4<double>&, const Tensor4<double>&);
template Tensor4<float> apply_mask(const Tensor4<float>&, const Mask&);
template Tensor4<double> apply_mask(const Tensor4<double>&, const Mask&);
template Tensor4<float> softmax_rows(const Tensor4<float>&);
template Tensor4<double> softmax_rows(const Tensor4<double>&);
template Tensor4<float> weighted_values(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> weighted_values(const Tensor4<double>&, const Tensor4<double>&);

}  // namespace anatomy
