#include "attention.hpp"

#include "exponential.hpp"
#include "matmul.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace anatomy {

// [anatomy:kv_group]
std::size_t kv_group(std::size_t n_query_heads, std::size_t n_kv_heads) {
    if (n_kv_heads == 0 || n_query_heads % n_kv_heads != 0)
        throw InputError("attention: query heads must be a multiple of KV heads");
    return n_query_heads / n_kv_heads;
}
// [/anatomy:kv_group]

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
            const Real* q_head = &q(b, h, 0, 0);          // [T, dh] this query head
            const Real* k_head = &k(b, h / group, 0, 0);  // [S, dh] the KV head it reads (GQA: an index, no copy)
            Real* out = &scores(b, h, 0, 0);              // [T, S]
            for (std::size_t t = 0; t < T; ++t) {
                const Real* q_row = q_head + t * dh;      // [dh] query t
                for (std::size_t s = 0; s < S; ++s) {
                    const Real* k_row = k_head + s * dh;  // [dh] key s
                    Real dot = 0;                         // q_row . k_row, summed over the channels in order
                    for (std::size_t d = 0; d < dh; ++d) dot += q_row[d] * k_row[d];
                    out[t * S + s] = dot * scale;
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
    const Real forbidden = -std::numeric_limits<Real>::infinity();
    Tensor4<Real> masked(scores.shape());
    for (std::size_t p = 0; p < planes; ++p) {
        const Real* in = scores.data() + p * T * S;  // [T, S] one head of one sequence
        Real* out = masked.data() + p * T * S;       // [T, S]
        for (std::size_t i = 0; i < T * S; ++i) out[i] = allowed.data()[i] ? in[i] : forbidden;
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
        const Real* in = x.data() + r * S;  // [S] one query's scores against every key
        Real* out = probs.data() + r * S;   // [S]
        const Real masked = -std::numeric_limits<Real>::infinity();
        std::size_t allowed_keys = 0;
        for (std::size_t s = 0; s < S; ++s) allowed_keys += in[s] != masked;
        if (allowed_keys == 0) {  // every key masked: a row of zeros rather than 0 / 0 = NaN
            for (std::size_t s = 0; s < S; ++s) out[s] = 0;
            continue;
        }
        Real row_max = masked;
        for (std::size_t s = 0; s < S; ++s) row_max = row_max < in[s] ? in[s] : row_max;
        for (std::size_t s = 0; s < S; ++s) out[s] = exponential(in[s] - row_max);  // e^-inf = 0 for a masked key
        Real sum = 0;
        for (std::size_t s = 0; s < S; ++s) sum += out[s];
        for (std::size_t s = 0; s < S; ++s) out[s] /= sum;
    }
    return probs;
}
// [/anatomy:softmax_rows]

template <typename Real>
Tensor4<Real> softmax_rows_with_sinks(const Tensor4<Real>& x, const Vector<Real>& sinks) {
    const std::size_t H = x.shape(1), T = x.shape(2), S = x.shape(3);
    if (sinks.size() != H) throw InputError("softmax_rows_with_sinks: " + std::to_string(sinks.size()) + " sinks for " + std::to_string(H) + " heads");
    const std::size_t rows = x.size() / (S ? S : 1);
    Tensor4<Real> probs(x.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* in = x.data() + r * S;     // [S] one query's scores against every key
        Real* out = probs.data() + r * S;      // [S]
        const Real sink = sinks(r / T % H);    // the row's head: rows run over b, then h, then t
        Real row_max = sink;                   // the sink is one more column, always allowed
        for (std::size_t s = 0; s < S; ++s) row_max = row_max < in[s] ? in[s] : row_max;
        for (std::size_t s = 0; s < S; ++s) out[s] = exponential(in[s] - row_max);  // e^-inf = 0 for a masked key
        Real sum = 0;
        for (std::size_t s = 0; s < S; ++s) sum += out[s];
        sum += exponential(sink - row_max);    // the sink's column: in the sum, not in the output
        for (std::size_t s = 0; s < S; ++s) out[s] /= sum;
    }
    return probs;
}

// [anatomy:weighted_values]
template <typename Real>
Tensor4<Real> weighted_values(const Tensor4<Real>& probs, const Tensor4<Real>& v) {
    const std::size_t B = probs.shape(0), Hq = probs.shape(1), T = probs.shape(2), S = probs.shape(3);
    const std::size_t Hkv = v.shape(1), dh = v.shape(3);
    if (v.shape(0) != B || v.shape(2) != S) throw InputError("weighted_values: probs and v disagree in shape");
    const std::size_t group = kv_group(Hq, Hkv);

    Tensor4<Real> out({B, Hq, T, dh});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const Real* p_head = &probs(b, h, 0, 0);      // [T, S] this head's weights
            const Real* v_head = &v(b, h / group, 0, 0);  // [S, dh] the KV head's values (GQA: the same index as the keys)
            Real* o_head = &out(b, h, 0, 0);              // [T, dh]
            for (std::size_t t = 0; t < T; ++t) {
                const Real* p_row = p_head + t * S;       // [S] query t's weights
                Real* o_row = o_head + t * dh;            // [dh]
                for (std::size_t d = 0; d < dh; ++d) {
                    Real acc = 0;                         // sum over keys of weight times value, in order of s
                    for (std::size_t s = 0; s < S; ++s) acc += p_row[s] * v_head[s * dh + d];
                    o_row[d] = acc;
                }
            }
        }
    return out;
}
// [/anatomy:weighted_values]

// ---------------------------------------------------------------- backward

template <typename Real>
Tensor4<Real> weighted_values_backward(const Tensor4<Real>& probs, const Tensor4<Real>& v, const Tensor4<Real>& dout,
                                       Tensor4<Real>& dv) {
    const std::size_t B = probs.shape(0), Hq = probs.shape(1), T = probs.shape(2), S = probs.shape(3), dh = v.shape(3);
    const std::size_t group = kv_group(Hq, v.shape(1));
    Tensor4<Real> dprobs = xt::zeros<Real>(probs.shape());
    std::vector<Real> v_t(dh * S);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const Real* v_head = &v(b, h / group, 0, 0);  // GQA: the shared KV head, read in place
            Real* dv_head = &dv(b, h / group, 0, 0);      // and its gradient, summed over the group
            if (h % group == 0)                           // the group's first query head: v^T, [dh, S]
                for (std::size_t s = 0; s < S; ++s)
                    for (std::size_t d = 0; d < dh; ++d) v_t[d * S + s] = v_head[s * dh + d];
            const Real* p = &probs(b, h, 0, 0);
            const Real* g = &dout(b, h, 0, 0);
            matmul_accumulate(g, false, v_t.data(), &dprobs(b, h, 0, 0), T, dh, S);  // dprobs = dout @ v^T  [T, S]
            matmul_accumulate(p, true, g, dv_head, S, T, dh);                        // dv += probs^T @ dout [S, dh]
        }
    return dprobs;
}

template <typename Real>
Tensor4<Real> softmax_rows_backward(const Tensor4<Real>& probs, const Tensor4<Real>& dprobs) {
    const std::size_t S = probs.shape(3), rows = probs.size() / (S ? S : 1);
    Tensor4<Real> dx(probs.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* p = probs.data() + r * S;
        const Real* dp = dprobs.data() + r * S;
        Real dot = 0;  // sum_s dp[s] p[s]
        for (std::size_t s = 0; s < S; ++s) dot += dp[s] * p[s];
        for (std::size_t s = 0; s < S; ++s) dx.data()[r * S + s] = p[s] * (dp[s] - dot);
    }
    return dx;
}

template <typename Real>
Tensor4<Real> softmax_rows_with_sinks_backward(const Tensor4<Real>& probs, const Tensor4<Real>& dprobs, Vector<Real>& dsinks) {
    const std::size_t H = probs.shape(1), T = probs.shape(2), S = probs.shape(3), rows = probs.size() / (S ? S : 1);
    if (dsinks.size() != H) throw InputError("softmax_rows_with_sinks_backward: dsinks has " + std::to_string(dsinks.size()) + " entries for " + std::to_string(H) + " heads");
    Tensor4<Real> dx(probs.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* p = probs.data() + r * S;
        const Real* dp = dprobs.data() + r * S;
        Real dot = 0;          // sum_s dp[s] p[s]; the sink's column adds nothing (no value, dp = 0)
        Real keys_share = 0;   // sum_s p[s]
        for (std::size_t s = 0; s < S; ++s) dot += dp[s] * p[s], keys_share += p[s];
        for (std::size_t s = 0; s < S; ++s) dx.data()[r * S + s] = p[s] * (dp[s] - dot);
        dsinks(r / T % H) += -(Real(1) - keys_share) * dot;
    }
    return dx;
}

template <typename Real>
Tensor4<Real> apply_mask_backward(const Tensor4<Real>& dmasked, const Mask& allowed) {
    const std::size_t T = dmasked.shape(2), S = dmasked.shape(3), planes = dmasked.shape(0) * dmasked.shape(1);
    if (allowed.shape(0) != T || allowed.shape(1) != S) throw InputError("apply_mask_backward: mask shape differs from scores");
    Tensor4<Real> dscores(dmasked.shape());
    for (std::size_t p = 0; p < planes; ++p)
        for (std::size_t i = 0; i < T * S; ++i) dscores.data()[p * T * S + i] = allowed.data()[i] ? dmasked.data()[p * T * S + i] : Real(0);
    return dscores;
}

template <typename Real>
Tensor4<Real> attention_scores_backward(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& dscores,
                                        Tensor4<Real>& dk) {
    const std::size_t B = q.shape(0), Hq = q.shape(1), T = q.shape(2), dh = q.shape(3), S = k.shape(2);
    const std::size_t group = kv_group(Hq, k.shape(1));
    const Real scale = Real(1.0 / std::sqrt(double(dh)));
    Tensor4<Real> dq = xt::zeros<Real>(q.shape());
    std::vector<Real> g(T * S);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const Real* ds = &dscores(b, h, 0, 0);
            for (std::size_t i = 0; i < T * S; ++i) g[i] = ds[i] * scale;  // the gradient of q k^T, [T, S]
            Real* dk_head = &dk(b, h / group, 0, 0);                       // the shared KV head: summed over its group
            matmul_accumulate(g.data(), false, &k(b, h / group, 0, 0), &dq(b, h, 0, 0), T, S, dh);  // dq = g @ k    [T, dh]
            matmul_accumulate(g.data(), true, &q(b, h, 0, 0), dk_head, S, T, dh);                   // dk += g^T @ q [S, dh]
        }
    return dq;
}

template Tensor4<float> weighted_values_backward(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&, Tensor4<float>&);
template Tensor4<double> weighted_values_backward(const Tensor4<double>&, const Tensor4<double>&, const Tensor4<double>&, Tensor4<double>&);
template Tensor4<float> softmax_rows_backward(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> softmax_rows_backward(const Tensor4<double>&, const Tensor4<double>&);
template Tensor4<float> softmax_rows_with_sinks_backward(const Tensor4<float>&, const Tensor4<float>&, Vector<float>&);
template Tensor4<double> softmax_rows_with_sinks_backward(const Tensor4<double>&, const Tensor4<double>&, Vector<double>&);
template Tensor4<float> apply_mask_backward(const Tensor4<float>&, const Mask&);
template Tensor4<double> apply_mask_backward(const Tensor4<double>&, const Mask&);
template Tensor4<float> attention_scores_backward(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&, Tensor4<float>&);
template Tensor4<double> attention_scores_backward(const Tensor4<double>&, const Tensor4<double>&, const Tensor4<double>&, Tensor4<double>&);

template Tensor4<float> attention_scores(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> attention_scores(const Tensor4<double>&, const Tensor4<double>&);
template Tensor4<float> apply_mask(const Tensor4<float>&, const Mask&);
template Tensor4<double> apply_mask(const Tensor4<double>&, const Mask&);
template Tensor4<float> softmax_rows(const Tensor4<float>&);
template Tensor4<double> softmax_rows(const Tensor4<double>&);
template Tensor4<float> softmax_rows_with_sinks(const Tensor4<float>&, const Vector<float>&);
template Tensor4<double> softmax_rows_with_sinks(const Tensor4<double>&, const Vector<double>&);
template Tensor4<float> weighted_values(const Tensor4<float>&, const Tensor4<float>&);
template Tensor4<double> weighted_values(const Tensor4<double>&, const Tensor4<double>&);

}  // namespace anatomy
