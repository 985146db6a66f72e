#include "weights.hpp"

#include <cmath>
#include <string>

#include <xtensor/xadapt.hpp>

#include "random.hpp"

namespace anatomy {
namespace {

template <std::size_t N>
xt::xtensor<float, N> draw(SplitMix64& rng, const std::array<std::size_t, N>& shape, double mean,
                           double stddev) {
    xt::xtensor<float, N> out(shape);
    for (float& value : out) value = static_cast<float>(mean + stddev * rng.normal());
    return out;
}

Matrix<float> draw_projection(SplitMix64& rng, int in, int out) {
    return draw<2>(rng, {std::size_t(in), std::size_t(out)}, 0.0, 1.0 / std::sqrt(double(in)));
}

Vector<float> draw_norm_scale(SplitMix64& rng, int width) {
    return draw<1>(rng, {std::size_t(width)}, 1.0, 0.1);
}

template <typename Real, std::size_t N>
void require_shape(const xt::xtensor<Real, N>& tensor, const std::array<std::size_t, N>& expected,
                   const std::string& name) {
    bool same = true;
    for (std::size_t i = 0; i < N; ++i) same = same && tensor.shape()[i] == expected[i];
    if (same) return;
    throw InputError("weight " + name + " has shape " + shape_text({tensor.shape().begin(), tensor.shape().end()}) +
                     ", expected " + shape_text({expected.begin(), expected.end()}));
}

template <typename To, typename From, std::size_t N>
xt::xtensor<To, N> cast(const xt::xtensor<From, N>& x) {
    return xt::xtensor<To, N>(xt::cast<To>(x));
}

}  // namespace

Model<float> random_model(const ModelConfig& config, std::uint64_t seed) {
    require_valid(config);
    const int D = config.hidden_size, V = config.vocab_size, F = config.ffn_size;
    const int q_width = config.n_heads * config.head_dim;
    const int kv_width = config.n_kv_heads * config.head_dim;
    SplitMix64 rng(seed);

    Model<float> model{config, {}};
    ModelWeights<float>& w = model.weights;
    w.embedding = draw<2>(rng, {std::size_t(V), std::size_t(D)}, 0.0, 1.0);
    for (int layer = 0; layer < config.n_layers; ++layer) {
        LayerWeights<float> l;
        l.attn_norm = draw_norm_scale(rng, D);
        l.wq = draw_projection(rng, D, q_width);
        l.wk = draw_projection(rng, D, kv_width);
        l.wv = draw_projection(rng, D, kv_width);
        l.wo = draw_projection(rng, q_width, D);
        if (config.attention_sinks) l.sinks = draw<1>(rng, {std::size_t(config.n_heads)}, 0.0, 1.0);
        l.ffn_norm = draw_norm_scale(rng, D);
        l.w_gate = draw_projection(rng, D, F);
        l.w_up = draw_projection(rng, D, F);
        l.w_down = draw_projection(rng, F, D);
        w.layers.push_back(std::move(l));
    }
    w.final_norm = draw_norm_scale(rng, D);
    if (!config.tie_embeddings) w.lm_head = draw_projection(rng, D, V);
    return model;
}

template <typename Real>
void require_shapes(const ModelConfig& c, const ModelWeights<Real>& w) {
    const std::size_t D = c.hidden_size, V = c.vocab_size, F = c.ffn_size;
    const std::size_t q_width = std::size_t(c.n_heads) * c.head_dim;
    const std::size_t kv_width = std::size_t(c.n_kv_heads) * c.head_dim;
    require_shape(w.embedding, {V, D}, "embedding");
    if (w.layers.size() != std::size_t(c.n_layers))
        throw InputError("model has " + std::to_string(w.layers.size()) + " layers, config says " +
                         std::to_string(c.n_layers));
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
        const LayerWeights<Real>& l = w.layers[i];
        const std::string at = "layers." + std::to_string(i) + ".";
        require_shape(l.attn_norm, {D}, at + "attn_norm");
        require_shape(l.wq, {D, q_width}, at + "wq");
        require_shape(l.wk, {D, kv_width}, at + "wk");
        require_shape(l.wv, {D, kv_width}, at + "wv");
        require_shape(l.wo, {q_width, D}, at + "wo");
        require_shape(l.sinks, {c.attention_sinks ? std::size_t(c.n_heads) : 0}, at + "sinks");
        require_shape(l.ffn_norm, {D}, at + "ffn_norm");
        require_shape(l.w_gate, {D, F}, at + "w_gate");
        require_shape(l.w_up, {D, F}, at + "w_up");
        require_shape(l.w_down, {F, D}, at + "w_down");
    }
    require_shape(w.final_norm, {D}, "final_norm");
    if (!c.tie_embeddings) require_shape(w.lm_head, {D, V}, "lm_head");
}

template <typename To, typename From>
Model<To> cast_model(const Model<From>& model) {
    Model<To> out{model.config, {}};
    const ModelWeights<From>& w = model.weights;
    out.weights.embedding = cast<To>(w.embedding);
    for (const LayerWeights<From>& l : w.layers) {
        out.weights.layers.push_back({cast<To>(l.attn_norm), cast<To>(l.wq), cast<To>(l.wk),
                                      cast<To>(l.wv), cast<To>(l.wo), cast<To>(l.ffn_norm),
                                      cast<To>(l.w_gate), cast<To>(l.w_up), cast<To>(l.w_down), cast<To>(l.sinks)});
    }
    out.weights.final_norm = cast<To>(w.final_norm);
    out.weights.lm_head = cast<To>(w.lm_head);
    return out;
}

template void require_shapes(const ModelConfig&, const ModelWeights<float>&);
template void require_shapes(const ModelConfig&, const ModelWeights<double>&);
template Model<double> cast_model(const Model<float>&);
template Model<float> cast_model(const Model<double>&);
template Model<float> cast_model(const Model<float>&);

}  // namespace anatomy
