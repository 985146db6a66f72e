#include "pretrained_model.hpp"

#include <set>

#include "../checkpoint/llama_tensors.hpp"

namespace anatomy {

std::string to_string(WeightPrecision precision) {
    return precision == WeightPrecision::float32 ? "float32" : "bfloat16";
}

PretrainedModel pretrained_from_views(const LlamaViews& views, WeightPrecision precision, const ReleaseBytes& release) {
    const ModelConfig& config = views.config;
    PretrainedModel model;
    model.config = config;
    model.precision = precision;
    std::set<std::string> dtypes;
    for (const LlamaTensorSpec& spec : llama_tensor_specs(config)) model.parameters += spec.tensor.elements();

    // Norm scales are copied to float32; under bfloat16 they are first rounded like every other weight.
    auto vector = [&](const TensorView& tensor) {
        const std::vector<float> values = read_floats(tensor);
        Vector<float> out(std::array<std::size_t, 1>{values.size()});
        for (std::size_t i = 0; i < values.size(); ++i)
            out(i) = precision == WeightPrecision::bfloat16 ? bfloat16_to_float(float_to_bfloat16(values[i])) : values[i];
        return out;
    };
    auto matrix = [&](const TensorView& tensor) {
        WeightView view = weight_view(tensor);
        dtypes.insert(dtype_name(view.dtype));
        if (precision == WeightPrecision::float32 || view.dtype == DType::bf16) {
            model.bytes_in_place += view.size_bytes();
            return view;
        }
        // Round to bfloat16 once, row by row through the exact float32 widening.
        std::vector<std::uint16_t> copy(view.elements());
        std::vector<float> buffer(view.cols);
        for (std::size_t j = 0; j < view.rows; ++j) {
            const float* row = view.row(j, buffer.data());
            for (std::size_t i = 0; i < view.cols; ++i) copy[j * view.cols + i] = float_to_bfloat16(row[i]);
        }
        if (release) release(view.bytes, view.size_bytes());
        model.converted.push_back(std::move(copy));
        WeightView held{reinterpret_cast<const std::uint8_t*>(model.converted.back().data()), DType::bf16, view.rows, view.cols};
        model.bytes_converted += held.size_bytes();
        return held;
    };

    model.embedding = matrix(views.embedding);
    for (const LlamaLayerViews& lv : views.layers) model.layers.push_back(layer_from_views<PretrainedLayer>(lv, vector, matrix));
    model.final_norm = vector(views.final_norm);
    model.lm_head = config.tie_embeddings ? model.embedding : matrix(views.lm_head);
    for (const std::string& d : dtypes) model.stored_dtypes += (model.stored_dtypes.empty() ? "" : ", ") + d;
    return model;
}

PretrainedModel pretrained_from_hf(const ModelConfig& config, const std::vector<const SafetensorsView*>& shards,
                                   const std::string& source, WeightPrecision precision, const ReleaseBytes& release) {
    return pretrained_from_views(llama_views(config, safetensors_views(shards), source), precision, release);
}

}  // namespace anatomy
