// The Hugging Face safetensors source: a view of each tensor of each shard where it lies.
#include "tensor_views.hpp"

#include "../tensor.hpp"

namespace anatomy {
namespace {

// A checkpoint's weights are F32, F16 or BF16: F64 is read only for attn diff (core/diff).
TensorView view_of(const SafetensorsView& file, const std::string& name, const TensorEntry& entry) {
    if (entry.dtype == DType::f64)
        throw InputError("tensor '" + name + "' has unsupported dtype 'F64' for weights (supported: F32, F16, BF16)");
    return {name, file.data() + entry.begin, entry.dtype, entry.shape};
}

}  // namespace

TensorViews safetensors_views(const std::vector<const SafetensorsView*>& shards) {
    TensorViews views;
    for (const SafetensorsView* shard : shards)
        for (const auto& [name, entry] : shard->tensors()) views.push_back(view_of(*shard, name, entry));
    return views;
}

TensorView safetensors_view(const SafetensorsView& file, const std::string& name) {
    const TensorEntry* entry = file.find(name);
    if (!entry) throw InputError("missing tensor '" + name + "'");
    return view_of(file, name, *entry);
}

}  // namespace anatomy
