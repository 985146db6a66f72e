#include "adamw.hpp"

#include <algorithm>
#include <cmath>

#include "../model/backward.hpp"

namespace anatomy {
namespace {

constexpr double pi = 3.14159265358979323846;

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
    for_each_tensor(
        [&](TensorKind, const auto& tensor) {
            for (const Real value : tensor) sum += double(value) * double(value);
        },
        gradients);
    return std::sqrt(sum);
}

template <typename Real>
double clip_gradients(ModelWeights<Real>& gradients, double max_norm) {
    const double norm = gradient_norm(gradients);
    if (max_norm > 0 && norm > max_norm) {
        const Real factor = Real(max_norm / norm);
        for_each_tensor(
            [&](TensorKind, auto& tensor) {
                for (Real& value : tensor) value *= factor;
            },
            gradients);
    }
    return norm;
}

template <typename Real>
void adamw_step(Model<Real>& model, const ModelWeights<Real>& gradients, AdamWState<Real>& state,
                const AdamWSettings& s, double lr) {
    state.steps += 1;
    const double correction1 = 1.0 - std::pow(s.beta1, double(state.steps));
    const double correction2 = 1.0 - std::pow(s.beta2, double(state.steps));
    for_each_tensor(
        [&](TensorKind kind, auto& w, const auto& g, auto& m, auto& v) {
            const bool decays = kind == TensorKind::projection;
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
        },
        model.weights, gradients, state.first, state.second);
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
