#include "online_softmax_steps.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../tensor.hpp"

namespace anatomy {

OnlineSoftmaxRow online_softmax_steps(const KernelCase& c, const KernelInputs& in, std::int64_t tile_k,
                                      std::int64_t batch, std::int64_t head, std::int64_t row) {
    const KernelShape& s = c.shape;
    if (tile_k < 1) throw InputError("a key tile holds at least 1 key");
    if (batch < 0 || batch >= s.B || head < 0 || head >= s.Hq || row < 0 || row >= s.T)
        throw InputError("the row's sequence, head or position is outside kernel case '" + c.id + "'");
    const double lowest = -std::numeric_limits<double>::infinity();
    const std::size_t D = std::size_t(s.D);
    const std::int64_t kv_head = head / (s.Hq / s.Hkv);
    const float* q = &in.q[std::size_t(((batch * s.Hq + head) * s.T + row) * s.D)];
    const auto key_row = [&](const std::vector<float>& x, std::int64_t key) {
        return &x[std::size_t(((batch * s.Hkv + kv_head) * s.S + key) * s.D)];
    };
    const auto sees = [&](std::int64_t key) {
        const std::int32_t* r = &in.ranges[std::size_t(row) * 4];
        return (key >= r[0] && key < r[1]) || (key >= r[2] && key < r[3]);
    };

    OnlineSoftmaxRow result;
    result.batch = batch;
    result.head = head;
    result.row = row;
    result.tile_k = tile_k;
    result.sink = in.sinks.empty() ? lowest : double(in.sinks[std::size_t(head)]);

    // The scaled scores: [S], -inf where hidden.
    const double scale = 1.0 / std::sqrt(double(s.D));
    result.scores.assign(std::size_t(s.S), lowest);
    for (std::int64_t key = 0; key < s.S; ++key) {
        if (!sees(key)) continue;
        const float* k = key_row(in.k, key);
        double dot = 0;
        for (std::size_t d = 0; d < D; ++d) dot += double(q[d]) * double(k[d]);
        result.scores[std::size_t(key)] = dot * scale;
    }

    // Tile by tile: m, l and acc after each.
    double m = lowest, l = 0;
    std::vector<double> acc(D, 0.0);
    for (std::int64_t first = 0; first < s.S; first += tile_k) {
        OnlineSoftmaxStep step;
        step.first = first;
        step.last = std::min(s.S, first + tile_k);
        step.tile_max = lowest;
        for (std::int64_t key = step.first; key < step.last; ++key) {
            if (!sees(key)) continue;
            step.visible += 1;
            step.tile_max = std::max(step.tile_max, result.scores[std::size_t(key)]);
        }
        if (step.visible > 0) {
            const double m_new = std::max(m, step.tile_max);
            step.rescale = m == lowest ? 1.0 : std::exp(m - m_new);
            l *= step.rescale;
            for (double& a : acc) a *= step.rescale;
            for (std::int64_t key = step.first; key < step.last; ++key) {
                if (!sees(key)) continue;
                const double e = std::exp(result.scores[std::size_t(key)] - m_new);
                const float* v = key_row(in.v, key);
                l += e;
                for (std::size_t d = 0; d < D; ++d) acc[d] += e * double(v[d]);
            }
            m = m_new;
        }
        step.m = m;
        step.l = l;
        step.acc = acc;
        result.steps.push_back(std::move(step));
    }

    // The plain softmax of the whole row at once, the sink a score without a value.
    const double top = std::max(m, result.sink);
    double total = result.sink == lowest ? 0.0 : std::exp(result.sink - top);
    for (double score : result.scores) total += score == lowest ? 0.0 : std::exp(score - top);
    result.probs.assign(std::size_t(s.S), 0.0);
    result.out.assign(D, 0.0);
    for (std::int64_t key = 0; key < s.S && total > 0; ++key) {
        const double score = result.scores[std::size_t(key)];
        if (score == lowest) continue;
        const double p = std::exp(score - top) / total;
        result.probs[std::size_t(key)] = p;
        const float* v = key_row(in.v, key);
        for (std::size_t d = 0; d < D; ++d) result.out[d] += p * double(v[d]);
    }
    return result;
}

}  // namespace anatomy
