// attn export-checkpoint: write the deterministic model as a Hugging Face Llama
// checkpoint, with a synthetic tokenizer.json of the same vocabulary size.
#include <iostream>
#include <memory>

#include "checkpoint_dir.hpp"
#include "commands.hpp"
#include "number_args.hpp"
#include "tokenizer/synthetic_tokenizer.hpp"

namespace anatomy::native {
namespace {

struct ExportOptions {
    std::string directory;
    std::string preset = "tiny";
    std::string seed = std::to_string(default_seed);
    std::string dtype = "float32";
    std::string layers;  // empty: the preset's own layer count
};

DType parse_dtype(const std::string& name) {
    if (name == "float32") return DType::f32;
    if (name == "float16") return DType::f16;
    if (name == "bfloat16") return DType::bf16;
    throw InputError("unknown --dtype '" + name + "' (expected float32, float16 or bfloat16)");
}

int run_export(const ExportOptions& options) {
    std::optional<ModelConfig> config = preset_config(options.preset);
    if (!config) throw InputError("unknown --config '" + options.preset + "' (known: tiny, tinyllama-1.1b)");
    const std::uint64_t seed = parse_decimal(options.seed, "--seed", 0, UINT64_MAX);
    if (!options.layers.empty()) config->n_layers = int(parse_decimal(options.layers, "--layers", 1, 1000));
    const DType dtype = parse_dtype(options.dtype);
    const Model<float> model = random_model(*config, seed);
    write_checkpoint(options.directory, model, dtype, synthetic_tokenizer_json(config->vocab_size));
    std::cout << "Wrote " << config->name << " (" << config->n_layers << " layers, seed " << seed << ", "
              << options.dtype << ") to " << options.directory << "/{config.json,model.safetensors,tokenizer.json}\n";
    return 0;
}

}  // namespace

CommandRunner add_export_checkpoint_command(CLI::App& app) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* cmd = app.add_subcommand("export-checkpoint", "Write the deterministic weights as a Hugging Face Llama checkpoint");
    cmd->add_option("dir", options->directory, "Output folder (created if missing)")->required();
    cmd->add_option("--config", options->preset, "Model preset: tiny or tinyllama-1.1b")->capture_default_str();
    cmd->add_option("--seed", options->seed, "Seed of the deterministic weights")->capture_default_str();
    cmd->add_option("--dtype", options->dtype, "Stored precision: float32, float16 or bfloat16")->capture_default_str();
    cmd->add_option("--layers", options->layers, "Override the preset's number of layers (1 to 1000)");
    return [options] { return run_export(*options); };
}

}  // namespace anatomy::native
