// attn probe: a pretrained Llama checkpoint on one prompt. Records the shapes,
// KV cache sizes, every layer's attention, cached vs full logits, attention
// sinks, the next tokens and a greedy continuation, as a trace (docs/trace-schema.md).
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include <xtensor/xtensor_config.hpp>

#include "build_info.hpp"
#include "checkpoint/hf_llama.hpp"
#include "checkpoint_dir.hpp"
#include "commands.hpp"
#include "cuda/gpu_probe.hpp"
#include "cuda/gpu_verify.hpp"
#include "json_input.hpp"
#include "number_args.hpp"
#include "parallel_for.hpp"
#include "lessons/head_patterns.hpp"
#include "pretrained/probe.hpp"
#include "probe_report.hpp"
#include "process_stats.hpp"
#include "token_list.hpp"
#include "tokenizer_file.hpp"

namespace anatomy::native {
namespace {

// A prompt of about twenty tokens, long enough that the second half of the queries
// (the ones sink_stats averages) has ten rows.
const char* default_prompt = "The cache keeps the keys and values of every earlier token, so a new token only computes its own.";

struct ProbeOptions {
    std::string model;
    std::string tokenizer;  // a llama2.c tokenizer.bin (or a tokenizer.json); default: the folder's tokenizer.json
    std::string device = "cpu";
    std::string dtype = "float32";
    std::string prompt;
    bool prompt_given = false;
    std::string tokens;
    bool chat = false;
    bool head_patterns = false;
    std::string generate = "8";
    std::string threads = "1";
    std::string output;
    bool output_given = false;
    bool tokenizer_given = false;
    bool tokens_given = false;
};

WeightPrecision parse_precision(const std::string& name) {
    if (name == "float32") return WeightPrecision::float32;
    if (name == "bfloat16") return WeightPrecision::bfloat16;
    throw InputError("unknown --dtype '" + name + "' (expected float32 or bfloat16)");
}

// A special token id from config.json, checked against the model's vocabulary and,
// when `piece` is given, against the tokenizer's piece at that id.
std::int32_t special_id(const char* field, std::int32_t id, const std::string& piece, const LlamaTokenizer& tokenizer,
                        const ModelConfig& config) {
    if (id >= config.vocab_size)
        throw InputError(std::string("config.json: ") + field + " " + std::to_string(id) + " is outside the vocabulary [0, " +
                         std::to_string(config.vocab_size - 1) + "]");
    const bool tokenizer_has_it = std::size_t(id) < tokenizer.vocab_size();
    if (!piece.empty() && tokenizer_has_it && tokenizer.piece(id) != piece)
        throw InputError(std::string("config.json: ") + field + " is " + std::to_string(id) + ", but tokenizer.json has '" +
                         tokenizer.piece(id) + "' there, not '" + piece + "'");
    return id;
}

// "MAJOR.MINOR.PATCH"
std::string library_version(int major, int minor, int patch) {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

int run_probe_command(const ProbeOptions& o) {
    const auto started = std::chrono::steady_clock::now();
    const int device = parse_device_flag(o.device);  // -1: the CPU
    if (device >= 0) require_gpu_device(device);      // before the checkpoint is read
    const WeightPrecision precision = parse_precision(o.dtype);
    if (o.tokenizer_given && o.tokenizer.empty()) throw InputError("--tokenizer needs a file: a llama2.c tokenizer.bin or a tokenizer.json");
    const int generate = int(parse_decimal(o.generate, "--generate", 0, 4096));
    const int threads = int(parse_decimal(o.threads, "--threads", 1, 256));
    if (o.prompt_given && o.tokens_given) throw InputError("give either --prompt or --tokens, not both");
    if (o.chat && o.tokens_given) throw InputError("--chat wraps a text prompt; it cannot be used with --tokens");

    std::unique_ptr<OutputFile> trace_file;  // made first, so a bad path fails before the work
    if (o.output_given) trace_file = std::make_unique<OutputFile>(o.output);

    // The checkpoint: config, mapped shards, tokenizer, special ids.
    auto load_start = std::chrono::steady_clock::now();
    const CheckpointFiles checkpoint = open_checkpoint(o.model);
    const ModelConfig& config = checkpoint.config;
    const HfCheckpointInfo info = hf_checkpoint_info(checkpoint.hf_config);
    const LlamaTokenizer tokenizer = checkpoint_tokenizer(o.model, o.tokenizer, checkpoint.llama2c, config.vocab_size);
    if (tokenizer.vocab_size() > std::size_t(config.vocab_size))
        throw InputError("the tokenizer has " + std::to_string(tokenizer.vocab_size()) + " pieces, more than the model's vocab_size " +
                         std::to_string(config.vocab_size));
    // llama2.c's tokenizers write BOS as "\n<s>\n", and its run.c ends a continuation at
    // BOS (= 1, which delimits stories), not at EOS.
    // -1: neither config.json nor the tokenizer names one (a tokenizer.json without <s>).
    const std::int32_t bos_given = info.bos_token_id.value_or(tokenizer.bos_id());
    const std::int32_t bos = bos_given < 0 ? -1 : special_id("bos_token_id", bos_given, checkpoint.llama2c ? "" : "<s>", tokenizer, config);
    std::vector<std::int32_t> eos_ids = info.eos_token_ids;
    if (eos_ids.empty() && (checkpoint.llama2c ? bos : tokenizer.eos_id()) >= 0) eos_ids.push_back(checkpoint.llama2c ? bos : tokenizer.eos_id());
    for (std::int32_t id : eos_ids) special_id("eos_token_id", id, "", tokenizer, config);
    if (bos < 0 && (!o.tokens_given || o.head_patterns))
        throw InputError("the tokenizer has no <s> and config.json names no bos_token_id, so a text prompt (and --head-patterns) "
                         "has no beginning-of-text token: give --tokens, or a bos_token_id in config.json");
    if (o.chat && eos_ids.empty()) throw InputError("--chat needs an end-of-text token: the tokenizer has no </s> and config.json names no eos_token_id");

    std::vector<std::int32_t> ids;
    const std::string text = o.prompt_given ? o.prompt : default_prompt;
    if (o.tokens_given) ids = parse_token_list(o.tokens, config.vocab_size);
    else ids = prompt_ids(tokenizer, text, o.chat, bos, eos_ids.empty() ? -1 : eos_ids.front());
    if (o.head_patterns && ids.size() < 2)
        throw InputError("--head-patterns needs a prompt of at least 2 tokens (its previous-token score reads pairs); this one has " +
                         std::to_string(ids.size()));
    if (ids.size() > max_probe_tokens)
        throw InputError("the prompt is " + std::to_string(ids.size()) + " tokens; the probe takes at most " +
                         std::to_string(max_probe_tokens) + " (the trace grows with layers x heads x tokens^2)");
    // The positions the passes reach: the prompt, then each generated token but the last
    // (fed back to predict the next); the induction pass of --head-patterns is BOS and 32 ids twice.
    const std::size_t positions = std::max<std::size_t>(ids.size() + std::size_t(std::max(generate - 1, 0)),
                                                        o.head_patterns ? 2 * induction_length + 1 : 0);
    warn_if_past_trained_positions(checkpoint.trained_positions, positions, o.model);

    // The weights, in place (or, for bfloat16 from a wider file, converted and the file's pages dropped).
    const ReleaseBytes release = [&](const std::uint8_t* begin, std::size_t size) {
        for (const MappedFile& file : checkpoint.files)
            if (file.contains(begin)) file.release(begin, size);
    };
    PretrainedModel model = pretrained_from_views(llama_views(config, checkpoint.tensors, o.model), precision, release);
    // Read every page once, so the timed passes do not wait on the disk; not after a
    // conversion, which has read the file already and released what it copied.
    if (model.bytes_converted == 0)
        for (const MappedFile& file : checkpoint.files) file.prefault();
    model.parallel = thread_parallel_for(threads);
    const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();

    ProbeRequest request;
    request.ids = ids;
    request.generate = generate;
    request.stop_ids = eos_ids;
    request.cache_dtype = precision == WeightPrecision::float32 ? DType::f32 : DType::bf16;
    request.head_patterns = o.head_patterns;
    request.bos_id = bos;
    ProbeResult result = device < 0 ? run_probe(model, tokenizer, request) : run_probe_on_gpu(device, model, tokenizer, request);

    ProbeCheckpoint& model_facts = result.checkpoint.emplace();
    model_facts.path = o.model;
    model_facts.name = config.name;
    model_facts.architectures = info.architectures;
    model_facts.torch_dtype = info.torch_dtype;
    model_facts.bos_token_id = bos;
    model_facts.eos_token_ids = eos_ids;
    model_facts.tokenizer_pieces = tokenizer.vocab_size();
    model_facts.trained_positions = checkpoint.trained_positions;
    model_facts.shards = checkpoint.files.size();
    ProbePrompt& prompt = result.prompt.emplace();
    prompt.from_ids = o.tokens_given;
    if (o.tokens_given) {
        prompt.ids = o.tokens;
    } else {
        prompt.text = text;
        prompt.chat = o.chat;
        prompt.is_default = !o.prompt_given;
    }
    if (device < 0) result.cpu = ProbeCpu{cpu_name(), cpu_threads(), threads};  // the GPU's probe fills its own
    result.software = ProbeSoftware{build_info(), long(__cplusplus),
                                    library_version(NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH),
                                    library_version(XTENSOR_VERSION_MAJOR, XTENSOR_VERSION_MINOR, XTENSOR_VERSION_PATCH)};
    result.process = ProbeProcess{load_seconds, peak_rss_bytes(), load_average(),
                                  std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()};
    const nlohmann::json trace = probe_result_to_json(result);

    print_probe_report(std::cout, trace);
    if (trace_file) {
        trace_file->stream() << json_text(trace) << "\n";
        trace_file->commit();
        std::cout << "Trace written to " << o.output << "\n";
    }
    return all_passed(result.checks) ? 0 : 1;
}

}  // namespace

CommandRunner add_probe_command(CLI::App& app) {
    auto o = std::make_shared<ProbeOptions>();
    CLI::App* cmd = app.add_subcommand("probe", "Run a pretrained Llama checkpoint on a prompt and record its attention as a trace");
    cmd->add_option("--model", o->model, "Hugging Face Llama checkpoint folder (config.json, model.safetensors or its index, "
                                         "tokenizer.json), or a llama2.c .bin file")
        ->required();
    cmd->add_option("--tokenizer", o->tokenizer, "The tokenizer: a llama2.c tokenizer.bin (needed with a .bin model) or a tokenizer.json")
        ->each([o](const std::string&) { o->tokenizer_given = true; });
    cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (the CUDA build; float32 on the GPU, eager attention for "
                                           "the full pass, split-K decode for the cached steps)")
        ->capture_default_str();
    cmd->add_option("--dtype", o->dtype, "Weight precision: float32 or bfloat16 (activations are float32 in both)")->capture_default_str();
    cmd->add_option("--prompt", o->prompt, "Text to encode (BOS is added); a default sentence when neither this nor --tokens is given")
        ->each([o](const std::string&) { o->prompt_given = true; });
    cmd->add_option("--tokens", o->tokens, "Comma-separated token ids, used as given (no BOS added)")
        ->each([o](const std::string&) { o->tokens_given = true; });
    cmd->add_flag("--chat", o->chat, "Wrap the prompt in TinyLlama's chat template: <|user|>\\nTEXT</s>\\n<|assistant|>\\n");
    cmd->add_option("--generate", o->generate, "Greedy continuation length, decoded through the KV cache (0 to 4096)")->capture_default_str();
    cmd->add_option("--threads", o->threads,
                    "Threads for the projections; the results are the same for any number (each projection waits for "
                    "all of them, so on a busy machine more can be slower)")
        ->capture_default_str();
    cmd->add_flag("--head-patterns", o->head_patterns,
                  "Score every head's previous-token, first-token, self and induction pattern (two more passes: the prompt, "
                  "and BOS + 32 random ids written twice)");
    cmd->add_option("--output", o->output, "Write the trace JSON here")->each([o](const std::string&) { o->output_given = true; });
    return [o] { return run_probe_command(*o); };
}

}  // namespace anatomy::native
