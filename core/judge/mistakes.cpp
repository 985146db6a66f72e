#include "mistakes.hpp"

#include <cmath>
#include <limits>

#include <xtensor/xmanipulation.hpp>

#include "../masks.hpp"
#include "../tensor.hpp"
#include "reference.hpp"

namespace anatomy::judge {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The recipe's mask, asked of masks.hpp: the correct rule is a MaskSpec; each
// mistake is that spec or a neighbour of it, read at a shifted query row
// (strict: the row one position earlier, so a query misses itself; no_offset: the
// row without the S - T cache offset).
bool visible(const AttentionRecipe& r, std::size_t t, std::size_t s, std::size_t T, std::size_t S) {
    MaskSpec spec;
    spec.T = std::int64_t(T);
    spec.S = std::int64_t(S);
    std::int64_t row = std::int64_t(t);
    const std::int64_t history = std::int64_t(S - T);
    switch (r.mask) {
        case MaskRule::causal: break;
        case MaskRule::none: spec.kind = MaskKind::full; break;
        case MaskRule::strict: row -= 1; break;
        case MaskRule::no_offset: row -= history; break;
        default:  // the window rules
            spec.kind = MaskKind::sliding_window;
            spec.window = r.window;
            if (r.mask == MaskRule::window_wide) spec.window += 1;
            if (r.mask == MaskRule::window_narrow) spec.window -= 1;  // 0 keys: nothing visible
            if (r.mask == MaskRule::window_no_offset) row -= history;
            if (r.mask == MaskRule::window_strict) row -= 1;
    }
    return mask_allows(spec, row, std::int64_t(s));
}

double scale_of(const AttentionRecipe& r, std::size_t D) {
    switch (r.scale) {
        case ScaleRule::inv_sqrt_d: return 1.0 / std::sqrt(double(D));
        case ScaleRule::none: return 1.0;
        case ScaleRule::inv_d: return 1.0 / double(D);
        case ScaleRule::given: return r.scale_value;
    }
    return 1.0;
}

// Stable softmax of n values at `x` with stride, in place; nothing finite gives NaN (as 0/0 would).
void softmax_strided(double* x, std::size_t n, std::size_t stride) {
    double m = -inf;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, x[i * stride]);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += (x[i * stride] = std::exp(x[i * stride] - m));
    for (std::size_t i = 0; i < n; ++i) x[i * stride] = m == -inf ? nan : x[i * stride] / sum;
}

Nd matmul(const Nd& a, const Nd& w) {  // [B, T, in] @ [in, out]
    const std::size_t B = a.shape(0), T = a.shape(1), in = a.shape(2), out = w.shape(1);
    Nd y = xt::zeros<double>({B, T, out});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i < in; ++i)
                for (std::size_t j = 0; j < out; ++j) y(b, t, j) += a(b, t, i) * w(i, j);
    return y;
}

}  // namespace

AttentionSteps attention_recipe_steps(const Nd& q, const Nd& k, const Nd& v, const AttentionRecipe& r) {
    const std::size_t B = q.shape(0), Hq = q.shape(1), T = q.shape(2), D = q.shape(3);
    const std::size_t Hkv = k.shape(1), S = k.shape(2);
    const std::size_t group = Hq / Hkv;
    const double scale = scale_of(r, D);
    AttentionSteps steps{xt::zeros<double>({B, Hq, T, S}), xt::zeros<double>({B, Hq, T, S}), xt::zeros<double>({B, Hq, T, D})};
    std::vector<double> p(T * S);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hq; ++h) {
            const std::size_t g = r.kv_head == KvHeadRule::floor_group ? h / group : h % Hkv;
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t s = 0; s < S; ++s) {
                    double dot = 0;
                    for (std::size_t d = 0; d < D; ++d) dot += q(b, h, t, d) * k(b, g, s, d);
                    steps.scores(b, h, t, s) = dot * scale;
                    const bool keep = r.mask_after_softmax || visible(r, t, s, T, S);
                    p[t * S + s] = keep ? dot * scale : -inf;
                }
            if (r.softmax_over_queries) {
                for (std::size_t s = 0; s < S; ++s) softmax_strided(&p[s], T, S);
            } else {
                for (std::size_t t = 0; t < T; ++t) softmax_strided(&p[t * S], S, 1);
            }
            if (r.mask_after_softmax)
                for (std::size_t t = 0; t < T; ++t)
                    for (std::size_t s = 0; s < S; ++s)
                        if (!visible(r, t, s, T, S)) p[t * S + s] = 0;
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t s = 0; s < S; ++s) {
                    steps.probs(b, h, t, s) = p[t * S + s];
                    for (std::size_t d = 0; d < D; ++d) steps.out(b, h, t, d) += p[t * S + s] * v(b, g, s, d);
                }
        }
    return steps;
}

Nd attention_recipe(const Nd& q, const Nd& k, const Nd& v, const AttentionRecipe& r) {
    return attention_recipe_steps(q, k, v, r).out;
}

Nd online_attention_without_rescale(const Nd& q, const Nd& k, const Nd& v, int block_size) {
    const std::size_t B = q.shape(0), H = q.shape(1), T = q.shape(2), D = q.shape(3), S = k.shape(2);
    const std::size_t group = H / k.shape(1), history = S - T, block = std::size_t(std::max(1, block_size));
    const double scale = 1.0 / std::sqrt(double(D));
    Nd out = xt::zeros<double>({B, H, T, D});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t t = 0; t < T; ++t) {
                double m = -inf, l = 0;
                std::vector<double> acc(D, 0.0);
                for (std::size_t start = 0; start < S; start += block) {
                    const std::size_t end = std::min(S, start + block);
                    std::vector<double> scores;
                    double block_max = -inf;
                    for (std::size_t s = start; s < end; ++s) {
                        double dot = 0;
                        for (std::size_t d = 0; d < D; ++d) dot += q(b, h, t, d) * k(b, h / group, s, d);
                        scores.push_back(causal_allows(std::int64_t(t), std::int64_t(s), std::int64_t(history)) ? dot * scale : -inf);
                        block_max = std::max(block_max, scores.back());
                    }
                    const double m_new = std::max(m, block_max);
                    if (m_new == -inf) continue;
                    // The bug: l and acc keep their old scale exp(-m) instead of being multiplied by exp(m - m_new).
                    for (std::size_t s = start; s < end; ++s) {
                        const double w = std::exp(scores[s - start] - m_new);
                        l += w;
                        for (std::size_t d = 0; d < D; ++d) acc[d] += w * v(b, h / group, s, d);
                    }
                    m = m_new;
                }
                for (std::size_t d = 0; d < D; ++d) out(b, h, t, d) = acc[d] / l;
            }
    return out;
}

Nd softmax_without_max(const Nd& x) {
    Nd out = xt::exp(x);
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        double sum = 0;
        for (std::size_t c = 0; c < x.shape(1); ++c) sum += out(r, c);
        for (std::size_t c = 0; c < x.shape(1); ++c) out(r, c) /= sum;
    }
    return out;
}

Nd softmax_sink_ignored(const Nd& x) {
    Nd out = x;
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        double m = -std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < x.shape(1); ++c) m = std::max(m, x(r, c));
        double sum = 0;
        for (std::size_t c = 0; c < x.shape(1); ++c) sum += std::exp(x(r, c) - m);
        for (std::size_t c = 0; c < x.shape(1); ++c) out(r, c) = std::exp(x(r, c) - m) / sum;
    }
    return out;
}

Nd softmax_sink_in_numerator(const Nd& x, double sink) {
    Nd out = x;
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        double m = sink;
        for (std::size_t c = 0; c < x.shape(1); ++c) m = std::max(m, x(r, c));
        const double sink_term = std::exp(sink - m);
        double sum = sink_term;
        for (std::size_t c = 0; c < x.shape(1); ++c) sum += std::exp(x(r, c) - m);
        for (std::size_t c = 0; c < x.shape(1); ++c) out(r, c) = (std::exp(x(r, c) - m) + sink_term) / sum;
    }
    return out;
}

Nd softmax_sink_outside_max(const Nd& x, double sink) {
    Nd out = x;
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        double m = -std::numeric_limits<double>::infinity();  // the keys' maximum only
        for (std::size_t c = 0; c < x.shape(1); ++c) m = std::max(m, x(r, c));
        double sum = std::exp(sink - m);
        for (std::size_t c = 0; c < x.shape(1); ++c) sum += std::exp(x(r, c) - m);
        for (std::size_t c = 0; c < x.shape(1); ++c) out(r, c) = std::exp(x(r, c) - m) / sum;
    }
    return out;
}

Nd softmax_sink_column_returned(const Nd& x, double sink) {
    const std::size_t R = x.shape(0), C = x.shape(1);
    const Nd keys = softmax_with_sink_reference(x, sink);
    Nd out = xt::zeros<double>({R, C + 1});
    for (std::size_t r = 0; r < R; ++r) {
        double share = 1;
        for (std::size_t c = 0; c < C; ++c) out(r, c) = keys(r, c), share -= keys(r, c);
        out(r, C) = share;
    }
    return out;
}

Nd softmax_over_columns(const Nd& x) {
    Nd out = x;
    for (std::size_t c = 0; c < x.shape(1); ++c) softmax_strided(out.data() + c, x.shape(0), x.shape(1));
    return out;
}

Nd split_heads_recipe(const Nd& y, std::size_t H, HeadLayout layout) {
    const std::size_t B = y.shape(0), T = y.shape(1), dh = y.shape(2) / H;
    if (layout == HeadLayout::reshape_only) return Nd(xt::reshape_view(y, {B, H, T, dh}));
    return Nd(xt::transpose(Nd(xt::reshape_view(y, {B, T, H, dh})), {0, 2, 1, 3}));
}

Nd merge_heads_recipe(const Nd& heads, HeadLayout layout) {
    const std::size_t B = heads.shape(0), H = heads.shape(1), T = heads.shape(2), dh = heads.shape(3);
    if (layout == HeadLayout::reshape_only) return Nd(xt::reshape_view(heads, {B, T, H * dh}));
    return Nd(xt::reshape_view(Nd(xt::transpose(heads, {0, 2, 1, 3})), {B, T, H * dh}));
}

Nd projection_recipe(const Nd& x, const Nd& w) { return matmul(x, w); }

Nd mha_recipe(const Nd& x, const Nd& wq, const Nd& wk, const Nd& wv, const Nd& wo, int n_heads,
              const AttentionRecipe& recipe, HeadLayout split, HeadLayout merge) {
    const std::size_t H = std::size_t(n_heads);
    const Nd heads = attention_recipe(split_heads_recipe(matmul(x, wq), H, split), split_heads_recipe(matmul(x, wk), H, split),
                                      split_heads_recipe(matmul(x, wv), H, split), recipe);
    return matmul(merge_heads_recipe(heads, merge), wo);
}

Nd rmsnorm_mistake(const Nd& x, const Nd& weight, double eps, RmsMistake mistake) {
    const std::size_t B = x.shape(0), T = x.shape(1), D = x.shape(2);
    Nd out(x.shape());
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t) {
            double mean = 0, sum_sq = 0;
            for (std::size_t d = 0; d < D; ++d) mean += x(b, t, d) / double(D);
            for (std::size_t d = 0; d < D; ++d) {
                const double centred = mistake == RmsMistake::mean_subtracted ? x(b, t, d) - mean : x(b, t, d);
                sum_sq += centred * centred;
            }
            const double ms = sum_sq / double(D);
            const double denominator = mistake == RmsMistake::eps_outside_sqrt ? std::sqrt(ms) + eps : std::sqrt(ms + eps);
            for (std::size_t d = 0; d < D; ++d) {
                const double centred = mistake == RmsMistake::mean_subtracted ? x(b, t, d) - mean : x(b, t, d);
                out(b, t, d) = centred / denominator * (mistake == RmsMistake::weight_ignored ? 1.0 : weight(d));
            }
        }
    return out;
}

Nd rope_mistake(const Nd& x, const Nd& positions, double theta, RopeMistake mistake) {
    const std::size_t B = x.shape(0), H = x.shape(1), T = x.shape(2), D = x.shape(3), half = D / 2;
    Nd out(x.shape());
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < half; ++i) {
            const double exponent = mistake == RopeMistake::exponent_without_two ? double(i) / double(D) : 2.0 * double(i) / double(D);
            double angle = positions(t) * std::pow(theta, -exponent);
            if (mistake == RopeMistake::wrong_sign) angle = -angle;
            // half_split_pairs is the rule itself here: a mistake only for a model that pairs (2i, 2i+1).
            const std::size_t a = mistake == RopeMistake::interleaved_pairs ? 2 * i : i;
            const std::size_t c = mistake == RopeMistake::interleaved_pairs ? 2 * i + 1 : i + half;
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t h = 0; h < H; ++h) {
                    const double x1 = x(b, h, t, a), x2 = x(b, h, t, c);
                    out(b, h, t, a) = x1 * std::cos(angle) - x2 * std::sin(angle);
                    out(b, h, t, c) = x1 * std::sin(angle) + x2 * std::cos(angle);
                }
        }
    return out;
}

Nd swiglu_mistake(const Nd& x, const Nd& w_gate, const Nd& w_up, const Nd& w_down, SwigluMistake mistake) {
    const Nd gate_in = matmul(x, mistake == SwigluMistake::gate_and_up_swapped ? w_up : w_gate);
    const Nd up = matmul(x, mistake == SwigluMistake::gate_and_up_swapped ? w_gate : w_up);
    Nd hidden(gate_in.shape());
    for (std::size_t i = 0; i < hidden.size(); ++i) {
        const double a = gate_in.data()[i];
        const double gate = mistake == SwigluMistake::sigmoid_gate ? 1.0 / (1.0 + std::exp(-a))
                            : mistake == SwigluMistake::relu_gate  ? std::max(0.0, a)
                                                                   : a / (1.0 + std::exp(-a));
        hidden.data()[i] = gate * up.data()[i];
    }
    return matmul(hidden, w_down);
}

}  // namespace anatomy::judge
