#include "adamw.hpp"

#include <cmath>
#include <algorithm>

#include "../model/backward.hpp"

namespace anatomy {
namespace {

constexpr double pi = 3.14159265358979323846;

// Calls visit(weight, gradient, first, second, decays) for every tensor, in the order of weights.hpp.
template <typename Real, typename Visit>
void each_tensor(ModelWeights<Real>& w, const ModelWeights<Real>& g, ModelWeights<Real>& m, ModelWeights<Real>& v,
                 const Visit& visit) {
    visit(w.embedding, g.embedding, m.embedding, v.embedding, false);
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
        LayerWeights<Real>& wl = w.layers[l];
        const LayerWeights<Real>& gl = g.layers[l];
        LayerWeights<Real>& ml = m.layers[l];
        LayerWeights<Real>& vl = v.layers[l];
        visit(wl.attn_norm, gl.attn_norm, ml.attn_norm, vl.attn_norm, false);
        visit(wl.wq, gl.wq, ml.wq, vl.wq, true);
        visit(wl.wk, gl.wk, ml.wk, vl.wk, true);
        visit(wl.wv, gl.wv, ml.wv, vl.wv, true);
        visit(wl.wo, gl.wo, ml.wo, vl.wo, true);
        visit(wl.ffn_norm, gl.ffn_norm, ml.ffn_norm, vl.ffn_norm, false);
        visit(wl.w_gate, gl.w_gate, ml.w_gate, vl.w_gate, true);
        visit(wl.w_up, gl.w_up, ml.w_up, vl.w_up, true);
        visit(wl.w_down, gl.w_down, ml.w_down, vl.w_down, true);
    }
    visit(w.final_norm, g.final_norm, m.final_norm, v.final_norm, false);
}

// Calls visit(tensor) for every tensor of `weights` (const or not).
template <typename Weights, typename Visit>
void each_gradient(Weights& weights, const Visit& visit) {
    visit(weights.embedding);
    for (auto& l : weights.layers) {
        visit(l.attn_norm), visit(l.wq), visit(l.wk), visit(l.wv), visit(l.wo);
        visit(l.ffn_norm), visit(l.w_gate), visit(l.w_up), visit(l.w_down);
    }
    visit(weights.final_norm);
}

}  // namespace

double LearningRateSchedule::at(int step) const {
    if (step < warmup_steps) return peak * double(step + 1) / double(warmup_steps);
    if (step >= total_steps) return peak * floor_ratio;
    const double progress = double(step - warmup_steps) / double(std::max(1, total_steps - warmup_steps));  // 0 .. 1
    return peak * (floor_ratio + (1.0 - floor_ratio) * 0.5 * (1.0 + std::cos(pi * progress)));
}

template <typename Real>
AdamWState<Real> adamw_state(const Model<Real>& model) {
    return {zero_gradients(model), zero_gradients(model), 0};
}

template <typename Real>
double gradient_norm(const ModelWeights<Real>& gradients) {
    double sum = 0;
    each_gradient(gradients, [&](const auto& tensor) {
        for (const Real value : tensor) sum += double(value) * double(value);
    });
    return std::sqrt(sum);
}

template <typename Real>
double clip_gradients(ModelWeights<Real>& gradients, double max_norm) {
    const double norm = gradient_norm(gradients);
    if (max_norm > 0 && norm > max_norm) {
        const Real factor = Real(max_norm / norm);
        each_gradient(gradients, [&](auto& tensor) {
            for (Real& value : tensor) value *= factor;
        });
    }
    return norm;
}

template <typename Real>
void adamw_step(Model<Real>& model, const ModelWeights<Real>& gradients, AdamWState<Real>& state,
                const AdamWSettings& s, double lr) {
    state.steps += 1;
    const double correction1 = 1.0 - std::pow(s.beta1, double(state.steps));
    const double correction2 = 1.0 - std::pow(s.beta2, double(state.steps));
    each_tensor(model.weights, gradients, state.first, state.second,
                [&](auto& w, const auto& g, auto& m, auto& v, bool decays) {
                    for (std::size_t i = 0; i < w.size(); ++i) {
                        const double grad = double(g.data()[i]);
                        const double m_i = s.beta1 * double(m.data()[i]) + (1.0 - s.beta1) * grad;
                        const double v_i = s.beta2 * double(v.data()[i]) + (1.0 - s.beta2) * grad * grad;
                        m.data()[i] = Real(m_i);
                        v.data()[i] = Real(v_i);
                        const double before = double(w.data()[i]);
                        const double update = lr * (m_i / correction1) / (std::sqrt(v_i / correction2) + s.epsilon);
                        const double decay = decays ? lr * s.weight_decay * before : 0.0;
                        w.data()[i] = Real(before - update - decay);
                    }
                });
}

template AdamWState<float> adamw_state(const Model<float>&);
template AdamWState<double> adamw_state(const Model<double>&);
template double gradient_norm(const ModelWeights<float>&);
template double gradient_norm(const ModelWeights<double>&);
template double clip_gradients(ModelWeights<float>&, double);
template double clip_gradients(ModelWeights<double>&, double);
template void adamw_step(Model<float>&, const ModelWeights<float>&, AdamWState<float>&, const AdamWSettings&, double);
template void adamw_step(Model<double>&, const ModelWeights<double>&, AdamWState<double>&, const AdamWSettings&, double);

}  // namespace anatomy
