#include "checkpoint_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <set>

#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"
#include "checkpoint/llama2c.hpp"
#include "checkpoint/model_from_views.hpp"
#include "json_input.hpp"
#include "warning.hpp"

namespace anatomy::native {
namespace fs = std::filesystem;

namespace {

// A llama2.c .bin file: one mapped file, its header read and its arrays viewed.
CheckpointFiles open_llama2c(const std::string& path) {
    CheckpointFiles checkpoint;
    checkpoint.files.emplace_back(path);
    const MappedFile& file = checkpoint.files.back();
    Llama2cCheckpoint ck = llama2c_checkpoint(file.data(), file.size(), path);
    checkpoint.config = ck.config;
    checkpoint.llama2c = true;
    checkpoint.hf_config = {{"max_position_embeddings", ck.seq_len}, {"llama2c_version", ck.version}};
    checkpoint.tensors = std::move(ck.tensors);
    return checkpoint;
}

CheckpointFiles open_files(const std::string& directory) {
    if (!fs::exists(directory)) throw InputError("checkpoint '" + directory + "' does not exist");
    if (fs::is_regular_file(directory)) return open_llama2c(directory);
    if (!fs::is_directory(directory)) throw InputError("checkpoint '" + directory + "' is neither a folder nor a file");
    const fs::path dir(directory);
    CheckpointFiles checkpoint;

    const std::string config_path = (dir / "config.json").string();
    const nlohmann::json config = read_json_file(config_path);
    checkpoint.config = config_from_hf_json(config);
    checkpoint.hf_config = config;

    std::vector<std::string> shard_names;
    nlohmann::json weight_map;  // tensor -> shard, from the index
    const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
    if (fs::exists(single)) {
        shard_names.push_back("model.safetensors");
    } else if (fs::exists(index)) {
        const nlohmann::json map = read_json_file(index.string());
        if (!map.contains("weight_map") || !map["weight_map"].is_object())
            throw InputError(index.string() + " has no weight_map object");
        std::set<std::string> unique;
        for (const auto& [tensor, file] : map["weight_map"].items()) {
            if (!file.is_string()) throw InputError(index.string() + ": shard of '" + tensor + "' is not a file name");
            const std::string name = file.get<std::string>();
            if (name.find('/') != std::string::npos || name == ".." )
                throw InputError(index.string() + ": shard name '" + name + "' must be a plain file name");
            unique.insert(name);
        }
        shard_names.assign(unique.begin(), unique.end());
        weight_map = map["weight_map"];
    } else {
        throw InputError("checkpoint '" + directory + "' has neither model.safetensors nor model.safetensors.index.json");
    }

    checkpoint.files.reserve(shard_names.size());
    std::vector<SafetensorsView> views;
    for (const std::string& name : shard_names) {
        const std::string path = (dir / name).string();
        checkpoint.files.emplace_back(path);
        views.push_back(SafetensorsView::parse(checkpoint.files.back().data(), checkpoint.files.back().size(), path));
    }
    // The index must say where each tensor really is.
    for (const auto& [tensor, file] : weight_map.items()) {
        const std::size_t shard = std::size_t(std::find(shard_names.begin(), shard_names.end(), file.get<std::string>()) - shard_names.begin());
        if (!views[shard].find(tensor))
            throw InputError(index.string() + " says tensor '" + tensor + "' is in " + file.get<std::string>() + ", but it is not there");
    }
    std::vector<const SafetensorsView*> shards;
    for (const SafetensorsView& view : views) shards.push_back(&view);
    checkpoint.tensors = safetensors_views(shards);
    return checkpoint;
}

// One line when the weights hold values that are not finite: every pass over them
// computes NaN or infinities, and every check fails.
void warn_of_non_finite_weights(const CheckpointFiles& checkpoint, const std::string& path) {
    if (const std::optional<NonFinite> found = non_finite_weights(checkpoint.tensors))
        warn("checkpoint '" + path + "' holds " + std::to_string(found->count) + (found->count == 1 ? " weight" : " weights") +
             " that " + (found->count == 1 ? "is" : "are") + " not finite (the first: " + describe(*found) +
             "); every pass over it computes NaN or infinities");
}

}  // namespace

CheckpointFiles open_checkpoint(const std::string& path) {
    CheckpointFiles checkpoint = open_files(path);
    const HfCheckpointInfo info = hf_checkpoint_info(checkpoint.hf_config);
    if (info.max_position_embeddings && *info.max_position_embeddings > 0) checkpoint.trained_positions = info.max_position_embeddings;
    warn_of_non_finite_weights(checkpoint, path);
    return checkpoint;
}

LoadedCheckpoint load_checkpoint(const std::string& path) {
    const CheckpointFiles checkpoint = open_checkpoint(path);
    return {model_from_views(llama_views(checkpoint.config, checkpoint.tensors, path)), checkpoint.trained_positions, checkpoint.llama2c};
}

void warn_if_past_trained_positions(const std::optional<std::int64_t>& trained, std::size_t positions, const std::string& path,
                                    const std::string& reaching) {
    if (trained && std::int64_t(positions) > *trained)
        warn(reaching + " " + std::to_string(positions) + " positions, past the " + std::to_string(*trained) + " that '" + path +
             "' was trained on (max_position_embeddings or seq_len): beyond them its predictions degrade");
}

void write_checkpoint(OutputFolder& folder, const Model<float>& model, DType dtype, const nlohmann::json& tokenizer_json,
                      const nlohmann::json& config_patch) {
    nlohmann::json config = hf_config_json(model.config, dtype);
    if (!config_patch.is_null()) config.merge_patch(config_patch);
    write_file(folder.file("config.json"), json_text(config, 2) + "\n");
    if (!tokenizer_json.is_null()) write_file(folder.file("tokenizer.json"), json_text(tokenizer_json) + "\n");

    // The same bytes as hf_safetensors(model, dtype), one tensor in memory at a time.
    OutputFile out(folder.file("model.safetensors"));
    const std::vector<TensorSpec> specs = hf_tensor_specs(model.config);
    const std::vector<std::uint8_t> header = safetensors_header(specs, dtype, hf_safetensors_metadata());
    out.stream().write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
    std::size_t index = 0;
    for_each_hf_tensor(model, [&](NamedTensor&& tensor) {
        if (index >= specs.size() || tensor.name != specs[index].name || tensor.shape != specs[index].shape)
            throw std::logic_error("write_checkpoint: tensor " + tensor.name + " is not the one the header lists");
        ++index;
        std::vector<std::uint8_t> bytes;
        encode_values(tensor.values, dtype, bytes);
        out.stream().write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    });
    out.commit();
}

}  // namespace anatomy::native
