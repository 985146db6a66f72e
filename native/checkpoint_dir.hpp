// A checkpoint on disk: a Hugging Face Llama folder (config.json plus
// model.safetensors, or shards listed by model.safetensors.index.json), or a
// llama2.c .bin file. This is where a weight source is chosen
// (core/checkpoint/tensor_views.hpp): each is a branch of open_checkpoint that
// fills `tensors` from its files.
#pragma once

#include <optional>
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
    bool llama2c = false;               // a llama2.c .bin file rather than a Hugging Face folder
    nlohmann::json hf_config;           // config.json as read (a llama2.c file: {"max_position_embeddings": seq_len})
    std::vector<MappedFile> files;      // the mapped shards, kept alive with the views
    TensorViews tensors;                // every tensor of every shard, where it lies in `files`
    // The positions the model was trained on: config.json's max_position_embeddings, a
    // llama2.c file's seq_len; nothing when the checkpoint does not say.
    std::optional<std::int64_t> trained_positions;
};

// Maps and validates every file; throws InputError naming the file and problem.
// `path` is a Hugging Face folder, or a llama2.c checkpoint file (core/checkpoint/llama2c.hpp).
CheckpointFiles open_checkpoint(const std::string& path);

// A checkpoint read into the tiny model's float32 form (attn verify, attn diff).
struct LoadedCheckpoint {
    Model<float> model;
    std::optional<std::int64_t> trained_positions;
    bool llama2c = false;  // a llama2.c .bin file (its tokenizer is a file of its own)
};
LoadedCheckpoint load_checkpoint(const std::string& path);

// One warning line when a run (or the part of it that `reaching` names, with its verb)
// reaches more positions than the checkpoint was trained on: RoPE then rotates by angles
// the model never saw, and its predictions degrade.
void warn_if_past_trained_positions(const std::optional<std::int64_t>& trained, std::size_t positions, const std::string& path,
                                    const std::string& reaching = "this run reaches");

// Writes config.json, model.safetensors (streamed one tensor at a time, so a 1.1B
// model needs no second copy in memory) and, when `tokenizer_json` is not null,
// tokenizer.json into `folder` (each file whole: files.hpp). `config_patch` (a JSON
// merge patch: null removes a key) changes config.json, e.g. the special token ids
// of another vocabulary. The caller commits the folder.
void write_checkpoint(OutputFolder& folder, const Model<float>& model, DType dtype, const nlohmann::json& tokenizer_json,
                      const nlohmann::json& config_patch = nullptr);

}  // namespace anatomy::native
