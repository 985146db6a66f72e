// The decoder's backward pass: the loss of a batch of training windows and the
// gradient of every weight, written as the forward's operations in reverse, each
// through its own backward (core/ops, beside its forward). Training runs whole
// windows from an empty cache, so positions are 0 .. T-1 and S = T.
//
//   forward (full_forward, every intermediate captured)  ->  logits -> cross-entropy
//   backward: dlogits -> tied head (into the embedding's gradient) -> final RMSNorm
//     -> per layer, last first: residual (dy to both branches) -> down, SwiGLU, gate/up
//        -> RMSNorm -> residual -> o projection -> merge heads -> weighted values
//        -> softmax -> mask -> scores (GQA: dk, dv summed into the shared KV head)
//        -> RoPE on q and k -> split heads -> q, k, v projections -> RMSNorm
//     -> embedding (rows added into the table's gradient)
// tests/unit/test_backward.cpp holds every operation's backward and the whole
// model's gradient to central finite differences in double precision.
#pragma once

#include "../tensor.hpp"
#include "weights.hpp"

namespace anatomy {

// Zeros shaped like every weight of `model` (a gradient to accumulate into).
template <typename Real>
ModelWeights<Real> zero_gradients(const Model<Real>& model);

// Mean cross-entropy of predicting targets[b, t] after tokens[b, 0..t] (nats per
// token), and its gradient with respect to every weight, added into `gradients`
// (zero_gradients first for a fresh one).
//   tokens, targets: [B, T]  ->  loss; gradients: shaped as model.weights
// Throws InputError for an id or target outside the vocabulary, or an untied model
// (the project's models tie their head to the embedding).
template <typename Real>
double loss_and_gradients(const Model<Real>& model, const TokenIds& tokens, const TokenIds& targets,
                          ModelWeights<Real>& gradients);

// The loss alone (the forward pass and cross-entropy), for evaluation and for the
// finite-difference tests.
template <typename Real>
double training_loss(const Model<Real>& model, const TokenIds& tokens, const TokenIds& targets);

}  // namespace anatomy
