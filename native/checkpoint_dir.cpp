#include "checkpoint_dir.hpp"

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"

namespace anatomy::native {
namespace fs = std::filesystem;

CheckpointFiles open_checkpoint(const std::string& directory) {
    if (!fs::exists(directory)) throw InputError("checkpoint folder '" + directory + "' does not exist");
    if (!fs::is_directory(directory)) throw InputError("checkpoint '" + directory + "' is not a folder");
    const fs::path dir(directory);
    CheckpointFiles checkpoint;

    const std::string config_path = (dir / "config.json").string();
    nlohmann::json config;
    try {
        config = nlohmann::json::parse(read_text_file(config_path));
    } catch (const nlohmann::json::exception&) {
        throw InputError(config_path + " is not valid JSON");
    }
    checkpoint.config = config_from_hf_json(config);

    std::vector<std::string> shard_names;
    const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
    if (fs::exists(single)) {
        shard_names.push_back("model.safetensors");
    } else if (fs::exists(index)) {
        nlohmann::json map;
        try {
            map = nlohmann::json::parse(read_text_file(index.string()));
        } catch (const nlohmann::json::exception&) {
            throw InputError(index.string() + " is not valid JSON");
        }
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
    } else {
        throw InputError("checkpoint '" + directory + "' has neither model.safetensors nor model.safetensors.index.json");
    }

    checkpoint.files.reserve(shard_names.size());
    for (const std::string& name : shard_names) {
        const std::string path = (dir / name).string();
        checkpoint.files.emplace_back(path);
        checkpoint.views.push_back(SafetensorsView::parse(checkpoint.files.back().data(), checkpoint.files.back().size(), path));
    }
    return checkpoint;
}

Model<float> load_checkpoint(const std::string& directory) {
    const CheckpointFiles checkpoint = open_checkpoint(directory);
    std::vector<const SafetensorsView*> shards;
    for (const SafetensorsView& view : checkpoint.views) shards.push_back(&view);
    return model_from_hf(checkpoint.config, shards, directory);
}

void write_checkpoint(const std::string& directory, const Model<float>& model, DType dtype) {
    make_directory(directory);
    const fs::path dir(directory);
    write_file((dir / "config.json").string(), hf_config_json(model.config, dtype).dump(2) + "\n");
    write_file((dir / "model.safetensors").string(), hf_safetensors(model, dtype));
}

}  // namespace anatomy::native
