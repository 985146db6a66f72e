#include "model_from_views.hpp"

#include <xtensor/xadapt.hpp>
#include <xtensor/xmanipulation.hpp>

#include "llama_tensors.hpp"

namespace anatomy {
namespace {

// A norm scale [D].
Vector<float> vector(const TensorView& t) {
    return Vector<float>(xt::adapt(read_floats(t), std::array<std::size_t, 1>{t.shape[0]}));
}

// A matrix kept as stored: the embedding [V, D].
Matrix<float> matrix(const TensorView& t) {
    return Matrix<float>(xt::adapt(read_floats(t), std::array<std::size_t, 2>{t.shape[0], t.shape[1]}));
}

// A projection stored [out, in] becomes our [in, out].
Matrix<float> projection_in_out(const TensorView& t) { return Matrix<float>(xt::transpose(matrix(t))); }

}  // namespace

Model<float> model_from_views(const LlamaViews& v) {
    Model<float> model{v.config, {}};
    model.weights.embedding = matrix(v.embedding);
    for (const LlamaLayerViews& lv : v.layers)
        model.weights.layers.push_back(layer_from_views<LayerWeights<float>>(lv, vector, projection_in_out));
    model.weights.final_norm = vector(v.final_norm);
    if (!v.config.tie_embeddings) model.weights.lm_head = projection_in_out(v.lm_head);
    return model;
}

FirstLayerAttentionWeights first_layer_from_views(const ModelConfig& config, const TensorViews& tensors,
                                                  const std::string& source, FirstLayerPart part) {
    require_valid(config);
    const auto find = [&](LlamaWeight weight) -> const TensorView& {
        return required_tensor(tensors, hf_tensor_name(weight, 0), stored_shape(config, weight), source);
    };
    FirstLayerAttentionWeights weights{matrix(find(LlamaWeight::embedding)), vector(find(LlamaWeight::attn_norm)),
                                       projection_in_out(find(LlamaWeight::wq)), projection_in_out(find(LlamaWeight::wk)), {}, {}};
    if (part == FirstLayerPart::attention) {
        weights.wv = projection_in_out(find(LlamaWeight::wv));
        weights.wo = projection_in_out(find(LlamaWeight::wo));
    }
    return weights;
}

}  // namespace anatomy
