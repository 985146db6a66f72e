#include "reference.hpp"

#include "../lessons/cost.hpp"
#include "../masks.hpp"
#include "../model/kv_cache.hpp"
#include "../ops/attention.hpp"
#include "../ops/heads.hpp"
#include "../ops/linear.hpp"
#include "../ops/rms_norm.hpp"
#include "../ops/rope.hpp"
#include "../ops/swiglu.hpp"

namespace anatomy::judge {
namespace {

template <std::size_t N>
xt::xtensor<double, N> fixed(const Nd& a) {
    if (a.dimension() != N) throw InputError("reference: expected a " + std::to_string(N) + "-D array");
    return xt::xtensor<double, N>(a);
}

// softmax(mask(q k^T / sqrt(D))) v with the given visibility, through the core's ops.
Nd masked_attention(const Nd& q, const Nd& k, const Nd& v, const Mask* allowed) {
    const Tensor4<double> scores = attention_scores(fixed<4>(q), fixed<4>(k));  // [B, Hq, T, S]
    const Tensor4<double> probs = softmax_rows(allowed ? apply_mask(scores, *allowed) : scores);
    return weighted_values(probs, fixed<4>(v));                                 // [B, Hq, T, D]
}

}  // namespace

Nd softmax_reference(const Nd& x) {
    Tensor4<double> rows = xt::xtensor<double, 4>(xt::reshape_view(x, {std::size_t(1), std::size_t(1), x.shape(0), x.shape(1)}));
    return Nd(xt::reshape_view(softmax_rows(rows), {x.shape(0), x.shape(1)}));
}

Nd softmax_with_sink_reference(const Nd& x, double sink) {
    Tensor4<double> rows = xt::xtensor<double, 4>(xt::reshape_view(x, {std::size_t(1), std::size_t(1), x.shape(0), x.shape(1)}));
    Vector<double> sinks = xt::zeros<double>({std::size_t(1)});
    sinks(0) = sink;
    return Nd(xt::reshape_view(softmax_rows_with_sinks(rows, sinks), {x.shape(0), x.shape(1)}));
}

Nd attention_reference(const Nd& q, const Nd& k, const Nd& v, bool causal) {
    if (!causal) return masked_attention(q, k, v, nullptr);
    const Mask allowed = causal_mask(q.shape(2), k.shape(2));
    return masked_attention(q, k, v, &allowed);
}

Nd sliding_window_reference(const Nd& q, const Nd& k, const Nd& v, int window) {
    MaskSpec spec;
    spec.kind = MaskKind::sliding_window;
    spec.T = std::int64_t(q.shape(2));
    spec.S = std::int64_t(k.shape(2));
    spec.window = window;
    Mask allowed({q.shape(2), k.shape(2)});
    for (std::size_t t = 0; t < allowed.shape(0); ++t)
        for (std::size_t s = 0; s < allowed.shape(1); ++s) allowed(t, s) = mask_allows(spec, std::int64_t(t), std::int64_t(s));
    return masked_attention(q, k, v, &allowed);
}

Nd causal_mha_reference(const Nd& x, const Nd& wq, const Nd& wk, const Nd& wv, const Nd& wo, int n_heads) {
    const Tensor3<double> input = fixed<3>(x);
    const Tensor4<double> q = split_heads(linear(input, fixed<2>(wq)), n_heads);  // [B, H, T, dh]
    const Tensor4<double> k = split_heads(linear(input, fixed<2>(wk)), n_heads);
    const Tensor4<double> v = split_heads(linear(input, fixed<2>(wv)), n_heads);
    const Nd heads = attention_reference(q, k, v, true);                          // [B, H, T, dh]
    return linear(merge_heads(fixed<4>(heads)), fixed<2>(wo));                     // [B, T, d]
}

Nd rmsnorm_reference(const Nd& x, const Nd& weight, double eps) { return rms_norm(fixed<3>(x), fixed<1>(weight), eps); }

Nd rope_reference(const Nd& x, const Nd& positions, double theta) {
    std::vector<std::int64_t> p(positions.begin(), positions.end());
    return apply_rope(fixed<4>(x), p, theta, RopePairing::half_split);
}

Nd swiglu_reference(const Nd& x, const Nd& w_gate, const Nd& w_up, const Nd& w_down) {
    return swiglu(fixed<3>(x), fixed<2>(w_gate), fixed<2>(w_up), fixed<2>(w_down));
}

json decode_step_reference(const Nd& q, const Nd& k_cache, const Nd& v_cache, const Nd& k_new, const Nd& v_new) {
    const Nd keys = append_rows(fixed<4>(k_cache), fixed<4>(k_new));    // [B, H, S + 1, D]
    const Nd values = append_rows(fixed<4>(v_cache), fixed<4>(v_new));  // [B, H, S + 1, D]
    return {{"out", nd_to_json(attention_reference(q, keys, values, true))},
            {"kCache", nd_to_json(keys)},
            {"vCache", nd_to_json(values)}};
}

json attention_flops_reference(double d, double T) {
    const AttentionFlops f = prefill_flops(d, T, 1, 1);  // no GQA: 8Td^2, 2T^2 d, 2T^2 d
    return {{"projections", f.projections}, {"scores", f.scores}, {"weighted", f.weighted}};
}

}  // namespace anatomy::judge
