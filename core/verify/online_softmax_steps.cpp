#include "online_softmax_steps.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../tensor.hpp"

namespace anatomy {
namespace {

void require_row(const KernelCase& c, std::int64_t batch, std::int64_t head, std::int64_t row) {
    const KernelShape& s = c.shape;
    if (batch < 0 || batch >= s.B || head < 0 || head >= s.Hq || row < 0 || row >= s.T)
        throw InputError("the row's sequence, head or position is outside kernel case '" + c.id + "'");
}

// Row `row`'s keys and values of the KV head that query head `head` reads.
const float* kv_row(const KernelCase& c, const std::vector<float>& x, std::int64_t batch, std::int64_t head, std::int64_t key) {
    const KernelShape& s = c.shape;
    const std::int64_t kv_head = head / (s.Hq / s.Hkv);
    return &x[std::size_t(((batch * s.Hkv + kv_head) * s.S + key) * s.D)];
}

}  // namespace

template <typename Real>
RowAttention<Real> row_attention(const KernelCase& c, const KernelInputs& in, std::int64_t batch, std::int64_t head,
                                 std::int64_t row) {
    require_row(c, batch, head, row);
    const KernelShape& s = c.shape;
    const Real lowest = -std::numeric_limits<Real>::infinity();
    const float* q = &in.q[std::size_t(((batch * s.Hq + head) * s.T + row) * s.D)];
    const std::int32_t* r = &in.ranges[std::size_t(row) * 4];
    RowAttention<Real> result;

    // The scaled scores: [S], -inf where hidden.
    const Real scale = Real(1.0 / std::sqrt(double(s.D)));
    result.scores.assign(std::size_t(s.S), lowest);
    Real top = in.sinks.empty() ? lowest : Real(in.sinks[std::size_t(head)]);
    for (std::int64_t key = 0; key < s.S; ++key) {
        if (!((key >= r[0] && key < r[1]) || (key >= r[2] && key < r[3]))) continue;
        const float* k = kv_row(c, in.k, batch, head, key);
        Real dot = 0;
        for (std::int64_t d = 0; d < s.D; ++d) dot += Real(q[d]) * Real(k[d]);
        result.scores[std::size_t(key)] = dot * scale;
        top = std::max(top, dot * scale);
    }

    // The softmax over the row with the sink as one more score without a value, then
    // the weighted sum of the values: probs [S], out [D].
    Real total = in.sinks.empty() ? Real(0) : std::exp(Real(in.sinks[std::size_t(head)]) - top);
    for (Real score : result.scores) total += score == lowest ? Real(0) : std::exp(score - top);
    result.probs.assign(std::size_t(s.S), Real(0));
    result.out.assign(std::size_t(s.D), Real(0));
    for (std::int64_t key = 0; key < s.S && total > 0; ++key) {
        const Real score = result.scores[std::size_t(key)];
        if (score == lowest) continue;
        const Real p = std::exp(score - top) / total;
        result.probs[std::size_t(key)] = p;
        const float* v = kv_row(c, in.v, batch, head, key);
        for (std::int64_t d = 0; d < s.D; ++d) result.out[std::size_t(d)] += p * Real(v[d]);
    }
    return result;
}

template RowAttention<float> row_attention(const KernelCase&, const KernelInputs&, std::int64_t, std::int64_t, std::int64_t);
template RowAttention<double> row_attention(const KernelCase&, const KernelInputs&, std::int64_t, std::int64_t, std::int64_t);

OnlineSoftmaxRow online_softmax_steps(const KernelCase& c, const KernelInputs& in, std::int64_t tile_k,
                                      std::int64_t batch, std::int64_t head, std::int64_t row) {
    if (tile_k < 1) throw InputError("a key tile holds at least 1 key");
    const KernelShape& s = c.shape;
    const double lowest = -std::numeric_limits<double>::infinity();
    RowAttention<double> plain = row_attention<double>(c, in, batch, head, row);

    OnlineSoftmaxRow result;
    result.batch = batch;
    result.head = head;
    result.row = row;
    result.tile_k = tile_k;
    result.sink = in.sinks.empty() ? lowest : double(in.sinks[std::size_t(head)]);

    // Tile by tile: m, l and acc after each.
    double m = lowest, l = 0;
    std::vector<double> acc(std::size_t(s.D), 0.0);
    for (std::int64_t first = 0; first < s.S; first += tile_k) {
        OnlineSoftmaxStep step;
        step.first = first;
        step.last = std::min(s.S, first + tile_k);
        step.tile_max = lowest;
        for (std::int64_t key = step.first; key < step.last; ++key) {
            if (plain.scores[std::size_t(key)] == lowest) continue;
            step.visible += 1;
            step.tile_max = std::max(step.tile_max, plain.scores[std::size_t(key)]);
        }
        if (step.visible > 0) {
            const double m_new = std::max(m, step.tile_max);
            step.rescale = m == lowest ? 1.0 : std::exp(m - m_new);
            l *= step.rescale;
            for (double& a : acc) a *= step.rescale;
            for (std::int64_t key = step.first; key < step.last; ++key) {
                if (plain.scores[std::size_t(key)] == lowest) continue;
                const double e = std::exp(plain.scores[std::size_t(key)] - m_new);
                const float* v = kv_row(c, in.v, batch, head, key);
                l += e;
                for (std::size_t d = 0; d < acc.size(); ++d) acc[d] += e * double(v[d]);
            }
            m = m_new;
        }
        step.m = m;
        step.l = l;
        step.acc = acc;
        result.steps.push_back(std::move(step));
    }

    result.scores = std::move(plain.scores);
    result.probs = std::move(plain.probs);
    result.out = std::move(plain.out);
    return result;
}

}  // namespace anatomy
