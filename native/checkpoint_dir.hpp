// A Hugging Face Llama checkpoint folder on disk: config.json plus
// model.safetensors, or shards listed by model.safetensors.index.json. This is
// where a weight source is chosen (core/checkpoint/tensor_views.hpp): a new one
// is a branch of open_checkpoint that fills `tensors` from its files.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/safetensors.hpp"
#include "checkpoint/tensor_views.hpp"
#include "files.hpp"
#include "model/weights.hpp"

namespace anatomy::native {

struct CheckpointFiles {
    ModelConfig config;
    nlohmann::json hf_config;           // config.json as read
    std::vector<MappedFile> files;      // the mapped shards, kept alive with the views
    TensorViews tensors;                // every tensor of every shard, where it lies in `files`
};

// Maps and validates every file; throws InputError naming the file and problem.
CheckpointFiles open_checkpoint(const std::string& directory);

Model<float> load_checkpoint(const std::string& directory);

// Writes config.json, model.safetensors (streamed one tensor at a time, so a 1.1B
// model needs no second copy in memory) and, when `tokenizer_json` is not null,
// tokenizer.json into `directory`.
void write_checkpoint(const std::string& directory, const Model<float>& model, DType dtype,
                      const nlohmann::json& tokenizer_json = nullptr);

}  // namespace anatomy::native
