// The Hugging Face safetensors source: a view of each tensor of each shard where it lies.
#include "tensor_views.hpp"

#include "../tensor.hpp"

namespace anatomy {
namespace {

TensorView view_of(const SafetensorsView& file, const std::string& name, const TensorEntry& entry) {
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
