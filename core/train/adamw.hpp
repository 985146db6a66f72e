// Training the decoder: AdamW with decoupled weight decay, the gradient clipped to
// a global norm, and a learning rate that warms up linearly, then decays along a
// cosine. The gradients come from model/backward.hpp.
//
// Weight decay applies to the projection matrices only. Not to the RMSNorm scales:
// they start at 1 and set each channel's gain after normalisation, so pulling them
// towards 0 fights the normalisation itself. Not to the embedding: it is tied to the
// output head, and a character that is rare in the text gets few gradient steps on
// its row while decay shrinks it at every step, until the model can neither read
// nor predict it.
#pragma once

#include <cstdint>

#include "../model/weights.hpp"

namespace anatomy {

struct AdamWSettings {
    double beta1 = 0.9;
    double beta2 = 0.95;
    double epsilon = 1e-8;
    double weight_decay = 0.1;  // per unit of learning rate, on projection matrices only
    double clip_norm = 1.0;     // the largest global gradient norm a step uses (0: no clipping)
};

// Linear warm-up from 0 to `peak` over `warmup_steps`, then a cosine from `peak` down
// to `peak * floor_ratio` at `total_steps` (and that floor after it). Steps count from 0.
struct LearningRateSchedule {
    double peak = 1e-3;
    int warmup_steps = 100;
    int total_steps = 1000;
    double floor_ratio = 0.1;

    double at(int step) const;
};

// The optimizer's running moments, shaped like the weights.
template <typename Real>
struct AdamWState {
    ModelWeights<Real> first;   // m: moving average of the gradient
    ModelWeights<Real> second;  // v: moving average of its square
    std::int64_t steps = 0;     // steps taken (the bias correction's t)
};

template <typename Real>
AdamWState<Real> adamw_state(const Model<Real>& model);

// sqrt of the sum of every gradient entry squared, over all tensors.
template <typename Real>
double gradient_norm(const ModelWeights<Real>& gradients);

// Scales every gradient by max_norm / norm when the norm exceeds max_norm (0: never).
// Returns the norm before clipping.
template <typename Real>
double clip_gradients(ModelWeights<Real>& gradients, double max_norm);

// One AdamW step at learning rate lr, for every weight w with gradient g:
//   m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
//   w -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon)
//   w -= lr * weight_decay * w      (projection matrices only, from w before this step)
template <typename Real>
void adamw_step(Model<Real>& model, const ModelWeights<Real>& gradients, AdamWState<Real>& state,
                const AdamWSettings& settings, double lr);

}  // namespace anatomy
