// attn verify: run every verification check on the tiny model (or a checkpoint)
// and print the table; optionally export the trace the page reads.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

#include "build_info.hpp"
#include "checkpoint_dir.hpp"
#include "files.hpp"
#include "commands.hpp"
#include "config_option.hpp"
#include "cuda/gpu_verify.hpp"
#include "json_input.hpp"
#include "model/token_batch.hpp"
#include "number_args.hpp"
#include "token_list.hpp"
#include "verify/check_suite.hpp"
#include "verify/trace.hpp"
#include "verify_table.hpp"

namespace anatomy::native {
namespace {

struct VerifyOptions {
    std::string tokens = "1,2,3,4,5,6";
    std::string batch = "2";
    std::string seed = std::to_string(default_seed);
    std::string preset = "tiny";
    std::string checkpoint;
    bool checkpoint_given = false;
    std::string trace_path;
    bool trace_given = false;
    std::string device = "cpu";
};

// Where a check met a value that is not finite, the first such value of the full
// pass: which tensor computed it, and where.
void print_first_non_finite(const Model<float>& model, const TokenIds& tokens, const std::vector<CheckRecord>& checks) {
    if (std::all_of(checks.begin(), checks.end(), [](const CheckRecord& c) { return std::isfinite(c.max_abs_error); })) return;
    TinyBackend backend(model);
    backend.reset(tokens.shape(0));
    PassCapture capture;
    const Tensor3<float> logits = backend.forward(tokens, &capture);
    if (const std::optional<NonFinite> found = first_non_finite(capture.layers, logits))
        std::cout << "The first value of the pass that is not finite: " << describe(*found) << " (" << found->count
                  << " in that tensor)\n";
}

int run_verify(const VerifyOptions& options) {
    const std::uint64_t seed = parse_decimal(options.seed, "--seed", 0, UINT64_MAX);
    const int device = parse_device_flag(options.device);  // -1: the CPU
    if (device >= 0) require_gpu_device(device);            // before any work: one line when there is none
    const int batch = int(parse_decimal(options.batch, "--batch", 1, max_batch));
    Model<float> model;
    std::string source;
    std::optional<std::int64_t> trained_positions;
    if (options.checkpoint_given) {
        if (options.checkpoint.empty()) throw InputError("--checkpoint needs a folder or a llama2.c file");
        LoadedCheckpoint loaded = load_checkpoint(options.checkpoint);
        model = std::move(loaded.model);
        trained_positions = loaded.trained_positions;
        source = "checkpoint " + options.checkpoint;
    } else {
        model = random_model(preset_option(options.preset), seed);
        source = "seed " + std::to_string(seed);
    }
    const std::vector<std::int32_t> ids = parse_token_list(options.tokens, model.config.vocab_size);
    if (ids.size() < 2) throw InputError("--tokens needs at least 2 ids: the checks compare positions");
    if (options.checkpoint_given) warn_if_past_trained_positions(trained_positions, ids.size(), options.checkpoint);
    const TokenIds tokens = make_batch(ids, batch, model.config.vocab_size);

    // Open the trace file before the work, so a bad path fails fast.
    std::unique_ptr<OutputFile> trace_file;
    if (options.trace_given) trace_file = std::make_unique<OutputFile>(options.trace_path);

    const nlohmann::json weights = !options.checkpoint_given
                                       ? nlohmann::json{{"source", "seed"}, {"seed", seed}}
                                       : nlohmann::json{{"source", "checkpoint"}, {"path", options.checkpoint}};
    if (device >= 0) {  // the GPU checks (gpu_verify.cpp) instead of the CPU ones
        const std::string header = model.config.name + " model (" + source + "), batch " + options.batch + " x " +
                                   std::to_string(ids.size()) + " tokens";
        const int status = run_verify_on_gpu(model, tokens, {device, header, weights, trace_file ? &trace_file->stream() : nullptr});
        if (trace_file) {
            trace_file->commit();
            std::cout << "Trace written to " << options.trace_path << "\n";
        }
        return status;
    }

    const BuildInfo build = build_info();
    std::cout << "attn verify: " << model.config.name << " model (" << source << "), batch " << options.batch << " x "
              << ids.size() << " tokens, " << build.platform << " build, " << build.compiler << "\n\n";
    const std::vector<CheckRecord> checks = run_checks(model, tokens);
    print_check_table(std::cout, checks);
    print_first_non_finite(model, tokens, checks);

    if (trace_file) {
        const nlohmann::json trace = make_trace(model, weights, tokens, checks, build);
        trace_file->stream() << json_text(trace) << "\n";
        trace_file->commit();
        std::cout << "Trace written to " << options.trace_path << "\n";
    }
    return all_passed(checks) ? 0 : 1;
}

}  // namespace

CommandRunner add_verify_command(CLI::App& app) {
    auto options = std::make_shared<VerifyOptions>();
    CLI::App* cmd = app.add_subcommand("verify", "Run every verification check and print errors against tolerances");
    cmd->add_option("--tokens", options->tokens, "Comma-separated token ids, at least 2 (each 0 .. vocab-1)")
        ->capture_default_str();
    cmd->add_option("--batch", options->batch, "Sequences in the batch, 1 to 16; row b > 0 is a shifted variant of --tokens")
        ->capture_default_str();
    cmd->add_option("--seed", options->seed, "Seed of the deterministic weights")->capture_default_str();
    cmd->add_option("--config", options->preset, "Model preset for generated weights: " + preset_names_text())
        ->capture_default_str();
    cmd->add_option("--checkpoint", options->checkpoint,
                    "Load weights from a Hugging Face Llama checkpoint folder instead of generating them")
        ->each([options](const std::string&) { options->checkpoint_given = true; });
    cmd->add_option("--export-trace", options->trace_path, "Write the trace JSON (config, probabilities, logits, checks) here")
        ->each([options](const std::string&) { options->trace_given = true; });
    cmd->add_option("--device", options->device,
                    "cpu, or cuda[:N]: run the model and every GPU kernel on that device and compare with the CPU core")
        ->capture_default_str();
    return [options] { return run_verify(*options); };
}

}  // namespace anatomy::native
