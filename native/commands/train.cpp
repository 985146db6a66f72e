// attn train: trains the decoder on a UTF-8 text with a character vocabulary built
// from it (train/trainer.hpp), and writes a Hugging Face folder (config.json,
// model.safetensors, tokenizer.json) that verify and probe read, with
// training.json: the command, the corpus's size and SHA-256, the settings, the
// loss curve, the final losses and what each head does.
//
// Everything is checked before the first step: the output folder (created at once
// beside its final name, and renamed into place only when training and writing are
// done, so an interrupted run or a failed write leaves no output at all), the text,
// the config, the memory the run needs against what the machine has, and that the
// text can spell the induction measure the record ends with.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "checkpoint/hf_llama.hpp"
#include "checkpoint_dir.hpp"
#include "commands.hpp"
#include "config_option.hpp"
#include "files.hpp"
#include "json_input.hpp"
#include "number_args.hpp"
#include "number_text.hpp"
#include "parallel_for.hpp"
#include "process_stats.hpp"
#include "tokenizer/character_vocabulary.hpp"
#include "train/trainer.hpp"
#include "train/training_config.hpp"

namespace anatomy::native {
namespace {

namespace fs = std::filesystem;

struct TrainOptions {
    std::string text, out;
    std::string steps = "3000", seed = "1", context = "64", batch = "64", lr = "3e-3", warmup = "100";
    std::string weight_decay = "0.1", repeat_fraction = "0", eval_every = "100", threads;
    std::string config;  // config.json keys over the tiny preset: a JSON object, or a file holding one
};

std::string sha256_hex(const std::string& bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr))
        throw std::runtime_error("SHA-256 failed");
    std::string hex;
    char pair[3];
    for (unsigned int i = 0; i < length; ++i) std::snprintf(pair, sizeof pair, "%02x", digest[i]), hex += pair;
    return hex;
}

// The tiny preset, vocabulary `vocab_size`, with --config's keys (inline JSON or a file) applied.
ModelConfig model_config(const std::string& overrides, int vocab_size) {
    if (overrides.empty()) return training_config(vocab_size, nlohmann::json::object());
    const nlohmann::json patch = config_keys_option(overrides);
    try {
        return training_config(vocab_size, patch);
    } catch (const InputError& e) {
        throw InputError(std::string("--config: ") + e.what());
    }
}

std::string duration(double seconds) {
    const long s = std::lround(seconds);
    std::ostringstream out;
    if (s >= 60) out << s / 60 << "m" << (s % 60 < 10 ? "0" : "") << s % 60 << "s";
    else out << s << "s";
    return out.str();
}

std::string thousands(double value) {
    std::string digits = std::to_string(std::llround(value));
    for (int at = int(digits.size()) - 3; at > 0; at -= 3) digits.insert(std::size_t(at), ",");
    return digits;
}

// "attn train --text ... --out ..." with every setting spelled out, for the record.
std::string command_line(const TrainOptions& o, int threads) {
    std::string c = "attn train --text " + o.text + " --out " + o.out + " --steps " + o.steps + " --seed " + o.seed +
                    " --context " + o.context + " --batch " + o.batch + " --lr " + o.lr + " --weight-decay " + o.weight_decay + " --warmup " + o.warmup +
                    " --repeat-fraction " + o.repeat_fraction + " --threads " + std::to_string(threads);
    if (!o.config.empty()) c += " --config '" + o.config + "'";
    return c;
}

int run_train(const TrainOptions& o) {
    TrainingSettings settings;
    settings.steps = int(parse_decimal(o.steps, "--steps", 1, 10'000'000));
    settings.seed = parse_decimal(o.seed, "--seed", 0, UINT64_MAX);
    settings.batch.context = parse_decimal(o.context, "--context", 2, 4096);
    settings.batch.windows = parse_decimal(o.batch, "--batch", 1, 65536);
    settings.batch.repeat_fraction = parse_real(o.repeat_fraction, "--repeat-fraction", 0, 1);
    settings.peak_rate = parse_real(o.lr, "--lr", 1e-7, 0.5);
    settings.adamw.weight_decay = parse_real(o.weight_decay, "--weight-decay", 0, 10);
    settings.warmup_steps = int(parse_decimal(o.warmup, "--warmup", 0, 10'000'000));
    const int eval_every = int(parse_decimal(o.eval_every, "--eval-every", 1, 10'000'000));
    const int threads = o.threads.empty() ? int(std::max(1u, std::thread::hardware_concurrency()))
                                          : int(parse_decimal(o.threads, "--threads", 1, 256));

    // The output first: a new folder, made now beside its final name (a name that
    // cannot be written fails before anything else), renamed into place at the end.
    OutputFolder folder(o.out, true);
    const std::string text = read_text_file(o.text);
    const nlohmann::json tokenizer_json = character_tokenizer_json(text);  // empty, binary or not UTF-8: InputError
    const LlamaTokenizer tokenizer = LlamaTokenizer::from_json(tokenizer_json);
    TrainingText training = training_text(tokenizer, text, settings.batch.context);
    const std::size_t characters = training.train.size() + training.heldout.size();
    ModelConfig config = model_config(o.config, int(tokenizer.vocab_size()));
    trained_induction_length(training, settings.batch.context);  // the record's induction measure: the text can spell it

    // What the run will add to what this process holds already (the text, the code).
    const TrainingMemory memory = training_memory(config, settings, characters, std::size_t(threads));
    require_memory(memory.total(), "this run",
                   byte_size_text(memory.activations) + " of them attention maps and other activations at context " +
                       std::to_string(settings.batch.context) + ", " + byte_size_text(memory.weights) + " weights and optimizer state",
                   "use a smaller --context, --batch or --threads, or a smaller model");

    Trainer trainer(config, std::move(training), settings);
    std::cerr << "attn train: " << thousands(double(characters)) << " characters (" << tokenizer.vocab_size() - 1
              << " distinct), " << config.n_layers << " layers, width " << config.hidden_size << ", "
              << settings.steps << " steps of " << settings.batch.windows << " x " << settings.batch.context << " tokens on "
              << threads << (threads == 1 ? " thread" : " threads") << ", about " << byte_size_text(memory.total() + double(peak_rss_bytes())) << " of memory\n";

    const ParallelFor parallel = thread_parallel_for(threads, 1);
    const bool live = isatty(STDERR_FILENO);
    using clock = std::chrono::steady_clock;
    double training_seconds = 0;
    nlohmann::json curve = nlohmann::json::array();
    StepResult last;
    // The first steps' losses and gradient norms, exactly: a retraining (a test, the
    // page's wasm) must give the same bits.
    constexpr int recorded_steps = 50;
    nlohmann::json first_losses = nlohmann::json::array(), first_norms = nlohmann::json::array();
    const double tokens_per_step = double(settings.batch.windows * settings.batch.context);
    for (int step = 1; step <= settings.steps; ++step) {
        const auto started = clock::now();
        last = trainer.step(parallel);
        training_seconds += std::chrono::duration<double>(clock::now() - started).count();
        if (step <= recorded_steps) first_losses.push_back(last.loss), first_norms.push_back(last.gradient_norm);
        if (!std::isfinite(last.loss))
            throw InputError("the loss became " + std::to_string(last.loss) + " at step " + std::to_string(step) +
                             " (try a smaller --lr)");
        const bool evaluate = step % eval_every == 0 || step == settings.steps || step == 1;
        const double rate = tokens_per_step * step / training_seconds;
        std::ostringstream line;
        line << "step " << step << "/" << settings.steps << "  train " << std::fixed;
        line.precision(3);
        line << last.loss;
        if (evaluate) {
            const double heldout = trainer.heldout_loss();
            curve.push_back({{"step", step}, {"train_loss", last.loss}, {"heldout_loss", heldout}});
            line << "  held-out " << heldout;
        }
        line << "  " << thousands(rate) << " tok/s  " << duration(training_seconds / step * (settings.steps - step)) << " left";
        if (evaluate) std::cerr << (live ? "\r\033[K" : "") << line.str() << "\n";
        else if (live) std::cerr << "\r\033[K" << line.str() << std::flush;
    }

    const double heldout = curve.back()["heldout_loss"].get<double>();
    const nlohmann::json record = {
        {"made_by", std::string("attn ") + ANATOMY_VERSION},
        {"command", command_line(o, threads)},
        {"corpus",
         {{"file", fs::path(o.text).filename().string()},
          {"bytes", text.size()},
          {"characters", characters},
          {"distinct_characters", tokenizer.vocab_size() - 1},
          {"sha256", sha256_hex(text)},
          {"heldout", "the last tenth of its characters"}}},
        {"config", hf_config_json(trainer.model().config, DType::f32)},
        {"settings", training_settings_json(settings)},
        {"threads", threads},
        {"result",
         {{"steps", settings.steps},
          {"train_loss", last.loss},
          {"heldout_loss", heldout},
          {"training_seconds", training_seconds},
          {"tokens_per_second", tokens_per_step * settings.steps / training_seconds}}},
        {"curve", curve},
        {"first_steps", {{"losses", first_losses}, {"gradient_norms", first_norms}}},
        {"head_patterns", trained_head_patterns(trainer.model(), trainer.text(), settings.batch.context)},
    };

    write_checkpoint(folder, trainer.model(), DType::f32, tokenizer_json,
                     {{"bos_token_id", tokenizer.bos_id()},
                      {"eos_token_id", nullptr},
                      {"max_position_embeddings", settings.batch.context}});  // the positions it was trained on
    write_file(folder.file("training.json"), json_text(record, 2) + "\n");
    folder.commit();
    std::cerr << "attn train: held-out loss " << heldout << " nats per character after " << settings.steps << " steps ("
              << duration(training_seconds) << "); wrote " << folder.path() << "/{config.json,model.safetensors,tokenizer.json,training.json}\n";
    return 0;
}

}  // namespace

CommandRunner add_train_command(CLI::App& app) {
    auto o = std::make_shared<TrainOptions>();
    CLI::App* cmd = app.add_subcommand("train", "Train the decoder on a UTF-8 text, one token per character");
    cmd->add_option("--text", o->text, "The training text (UTF-8); its last tenth is held out")->required();
    cmd->add_option("--out", o->out, "A new folder for the trained checkpoint")->required();
    cmd->add_option("--steps", o->steps, "Training steps")->capture_default_str();
    cmd->add_option("--seed", o->seed, "Seed of the first weights and the batches")->capture_default_str();
    cmd->add_option("--context", o->context, "Tokens per training window (BOS first)")->capture_default_str();
    cmd->add_option("--batch", o->batch, "Windows per step")->capture_default_str();
    cmd->add_option("--lr", o->lr, "Peak learning rate (AdamW)")->capture_default_str();
    cmd->add_option("--weight-decay", o->weight_decay,
                    "AdamW's decoupled weight decay, per unit of learning rate, on the projection matrices")
        ->capture_default_str();
    cmd->add_option("--warmup", o->warmup, "Steps of linear warm-up before the cosine decay")->capture_default_str();
    cmd->add_option("--repeat-fraction", o->repeat_fraction,
                    "Share of each batch's windows that are a random string repeated (for induction heads)")
        ->capture_default_str();
    cmd->add_option("--eval-every", o->eval_every, "Steps between held-out evaluations")->capture_default_str();
    cmd->add_option("--threads", o->threads, "Threads (default: every core); the result is the same for any number");
    cmd->add_option("--config", o->config,
                    "config.json keys over the tiny preset, as a JSON object or a file, e.g. '{\"hidden_size\": 64}'");
    return [o] { return run_train(*o); };
}

}  // namespace anatomy::native
