#include "backward.hpp"

#include "../ops/attention.hpp"
#include "../ops/embedding.hpp"
#include "../ops/heads.hpp"
#include "../ops/linear.hpp"
#include "../ops/logits.hpp"
#include "../ops/rms_norm.hpp"
#include "../ops/rope.hpp"
#include "../ops/swiglu.hpp"
#include "forward.hpp"

namespace anatomy {
namespace {

// One decoder layer backward, from the gradient of its output to that of its input.
//   dout: [B, T, D]  ->  dx: [B, T, D]; the layer's weight gradients accumulated into g
template <typename Real>
Tensor3<Real> layer_backward(const ModelConfig& c, const LayerWeights<Real>& w, const LayerCapture<Real>& f,
                             const std::vector<std::int64_t>& positions, const Tensor3<Real>& dout,
                             LayerWeights<Real>& g) {
    // --- feed-forward sublayer: out = after_attention + down(swiglu(gate(h2), up(h2))), h2 = norm(after_attention)
    // The residual hands dout to both branches.
    const Tensor3<Real> h2 = rms_norm(f.after_attention, w.ffn_norm, c.rms_norm_eps);  // [B, T, D], recomputed
    const Tensor3<Real> gate = linear(h2, w.w_gate);                                   // [B, T, F]
    const Tensor3<Real> up = linear(h2, w.w_up);                                       // [B, T, F]
    const Tensor3<Real> hidden = swiglu_hidden(gate, up);                              // [B, T, F]
    const Tensor3<Real> dhidden = linear_backward(hidden, w.w_down, dout, g.w_down);   // [B, T, F]
    const auto [dgate, dup] = swiglu_hidden_backward(gate, up, dhidden);               // [B, T, F] each
    const Tensor3<Real> dh2 = linear_backward(h2, w.w_gate, dgate, g.w_gate) + linear_backward(h2, w.w_up, dup, g.w_up);
    Tensor3<Real> dafter = dout + rms_norm_backward(f.after_attention, w.ffn_norm, c.rms_norm_eps, dh2, g.ffn_norm);

    // --- attention sublayer: after = input + o(merge(probs @ v)), probs from q_rope, k_rope of norm(input)
    const Tensor3<Real> merged = merge_heads(f.head_outputs);                           // [B, T, Hq*dh]
    const Tensor4<Real> dheads = split_heads(linear_backward(merged, w.wo, dafter, g.wo), c.n_heads);  // [B, Hq, T, dh]
    Tensor4<Real> dv = xt::zeros<Real>(f.v.shape());                                     // [B, Hkv, T, dh]
    const Tensor4<Real> dprobs = weighted_values_backward(f.probs, f.v, dheads, dv);     // [B, Hq, T, S]
    const Tensor4<Real> dmasked = c.attention_sinks                                      // [B, Hq, T, S]
                                      ? softmax_rows_with_sinks_backward(f.probs, dprobs, g.sinks)  // and dsinks [Hq]
                                      : softmax_rows_backward(f.probs, dprobs);
    const std::size_t T = f.probs.shape(2), S = f.probs.shape(3);
    const Tensor4<Real> dscores = apply_mask_backward(dmasked, causal_mask(T, S));      // [B, Hq, T, S]
    Tensor4<Real> dk_rope = xt::zeros<Real>(f.k_rope.shape());                           // [B, Hkv, T, dh]
    const Tensor4<Real> dq_rope = attention_scores_backward(f.q_rope, f.k_rope, dscores, dk_rope);
    const Tensor4<Real> dq = apply_rope_backward(dq_rope, positions, c.rope_theta, c.rope_pairing);
    const Tensor4<Real> dk = apply_rope_backward(dk_rope, positions, c.rope_theta, c.rope_pairing);
    const Tensor3<Real>& h = f.normed_input;                                             // [B, T, D]
    const Tensor3<Real> dh = linear_backward(h, w.wq, merge_heads(dq), g.wq) + linear_backward(h, w.wk, merge_heads(dk), g.wk) +
                             linear_backward(h, w.wv, merge_heads(dv), g.wv);
    return dafter + rms_norm_backward(f.input, w.attn_norm, c.rms_norm_eps, dh, g.attn_norm);
}

template <typename Real>
void require_tied(const Model<Real>& model) {
    if (!model.config.tie_embeddings) throw InputError("training needs a model whose head is tied to its embedding");
}

}  // namespace

template <typename Real>
ModelWeights<Real> zero_gradients(const Model<Real>& model) {
    ModelWeights<Real> zeros = model.weights;
    for_each_tensor([](TensorKind, auto& tensor) { tensor.fill(Real(0)); }, zeros);
    return zeros;
}

template <typename Real>
double training_loss(const Model<Real>& model, const TokenIds& tokens, const TokenIds& targets) {
    require_tied(model);
    return cross_entropy(full_forward(model, tokens), targets);
}

template <typename Real>
double loss_and_gradients(const Model<Real>& model, const TokenIds& tokens, const TokenIds& targets,
                          ModelWeights<Real>& gradients) {
    require_tied(model);
    const ModelConfig& c = model.config;
    ForwardCapture<Real> f;
    const Tensor3<Real> logits = full_forward(model, tokens, AttentionPath::grouped, &f);  // [B, T, V]
    const double loss = cross_entropy(logits, targets);

    const Tensor3<Real> dlogits = cross_entropy_backward(logits, targets);                // [B, T, V]
    const Tensor3<Real> dfinal = tied_logits_backward(f.final_normed, model.weights.embedding, dlogits, gradients.embedding);
    const Tensor3<Real>& last = f.layers.back().output;                                    // [B, T, D]
    Tensor3<Real> dx = rms_norm_backward(last, model.weights.final_norm, c.rms_norm_eps, dfinal, gradients.final_norm);
    for (std::size_t l = f.layers.size(); l-- > 0;)
        dx = layer_backward(c, model.weights.layers[l], f.layers[l], f.positions, dx, gradients.layers[l]);
    embed_backward(dx, tokens, gradients.embedding);
    return loss;
}

template ModelWeights<float> zero_gradients(const Model<float>&);
template ModelWeights<double> zero_gradients(const Model<double>&);
template double training_loss(const Model<float>&, const TokenIds&, const TokenIds&);
template double training_loss(const Model<double>&, const TokenIds&, const TokenIds&);
template double loss_and_gradients(const Model<float>&, const TokenIds&, const TokenIds&, ModelWeights<float>&);
template double loss_and_gradients(const Model<double>&, const TokenIds&, const TokenIds&, ModelWeights<double>&);

}  // namespace anatomy
