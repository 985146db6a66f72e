// attn export-checkpoint: write the deterministic model as a Hugging Face Llama
// checkpoint, with a synthetic tokenizer.json of the same vocabulary size.
#include <iostream>
#include <memory>

#include "checkpoint/llama2c.hpp"
#include "checkpoint_dir.hpp"
#include "commands.hpp"
#include "config_option.hpp"
#include "number_args.hpp"
#include "number_text.hpp"
#include "process_stats.hpp"
#include "tokenizer/synthetic_tokenizer.hpp"

namespace anatomy::native {
namespace {

struct ExportOptions {
    std::string directory;
    std::string format = "hf";   // hf: a Hugging Face folder; llama2c: MODEL.bin + tokenizer.bin
    std::string seq_len = "256";  // llama2c: the context written into the header
    std::string version = "0";    // llama2c: file version 0 or 1
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

// model.bin and tokenizer.bin in llama2.c's formats, the model streamed.
void write_llama2c_files(OutputFolder& folder, const Model<float>& model, int seq_len, int version) {
    OutputFile out(folder.file("model.bin"));
    write_llama2c(model, seq_len, version, [&](const std::vector<std::uint8_t>& bytes) {
        out.stream().write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    });
    out.commit();
    write_file(folder.file("tokenizer.bin"), synthetic_tokenizer_bin(model.config.vocab_size));
}

int run_export(const ExportOptions& options) {
    ModelConfig config = preset_option(options.preset);
    if (options.format != "hf" && options.format != "llama2c")
        throw InputError("unknown --format '" + options.format + "' (expected hf or llama2c)");
    const std::uint64_t seed = parse_decimal(options.seed, "--seed", 0, UINT64_MAX);
    if (!options.layers.empty()) config.n_layers = int(parse_decimal(options.layers, "--layers", 1, 1000));
    const DType dtype = parse_dtype(options.dtype);
    const bool llama2c = options.format == "llama2c";
    if (llama2c && options.dtype != "float32") throw InputError("--format llama2c writes float32 (llama2.c version 0 and 1)");
    const int seq_len = int(parse_decimal(options.seq_len, "--seq-len", 1, 1 << 20));
    const int version = int(parse_decimal(options.version, "--llama2c-version", 0, 1));
    // The model is made in float32 in memory, then written one tensor at a time.
    require_memory(config.parameter_count() * sizeof(float), config.name + " with " + std::to_string(config.n_layers) + " layers",
                   number_text("%.3g", config.parameter_count()) + " float32 weights", "use fewer --layers or a smaller --config");
    OutputFolder folder(options.directory, false);
    const Model<float> model = random_model(config, seed);
    if (llama2c) {
        write_llama2c_files(folder, model, seq_len, version);
        folder.commit();
        std::cout << "Wrote " << config.name << " (" << config.n_layers << " layers, seed " << seed
                  << ", llama2.c version " << version << ", seq_len " << seq_len << ") to " << folder.path()
                  << "/{model.bin,tokenizer.bin}\n";
        return 0;
    }
    write_checkpoint(folder, model, dtype, synthetic_tokenizer_json(config.vocab_size));
    folder.commit();
    std::cout << "Wrote " << config.name << " (" << config.n_layers << " layers, seed " << seed << ", "
              << options.dtype << ") to " << folder.path() << "/{config.json,model.safetensors,tokenizer.json}\n";
    return 0;
}

}  // namespace

CommandRunner add_export_checkpoint_command(CLI::App& app) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* cmd = app.add_subcommand("export-checkpoint", "Write the deterministic weights as a Hugging Face Llama checkpoint");
    cmd->add_option("dir", options->directory, "Output folder (created if missing)")->required();
    cmd->add_option("--config", options->preset, "Model preset: " + preset_names_text())->capture_default_str();
    cmd->add_option("--format", options->format, "hf (config.json, model.safetensors, tokenizer.json) or llama2c "
                                                 "(model.bin, tokenizer.bin; needs an interleaved-RoPE preset such as stories15m)")
        ->capture_default_str();
    cmd->add_option("--seq-len", options->seq_len, "llama2c: the context length in the header")->capture_default_str();
    cmd->add_option("--llama2c-version", options->version, "llama2c: file version 0 (legacy) or 1")->capture_default_str();
    cmd->add_option("--seed", options->seed, "Seed of the deterministic weights")->capture_default_str();
    cmd->add_option("--dtype", options->dtype, "Stored precision: float32, float16 or bfloat16")->capture_default_str();
    cmd->add_option("--layers", options->layers, "Override the preset's number of layers (1 to 1000)");
    return [options] { return run_export(*options); };
}

}  // namespace anatomy::native
