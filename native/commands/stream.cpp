// attn stream: a long text decoded one token at a time through a KV cache of at most
// W entries, under each eviction policy (core/model/kv_eviction.hpp), against the
// reference that recomputes every prediction from the last W tokens, summarised by
// core/stream/stream_report.hpp (as the page's StreamingLLM widget is): for each policy
// the mean loss over the positions after the first eviction, where it departs from the
// reference, and the loss of every position (with --json).
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "checkpoint_dir.hpp"
#include "commands.hpp"
#include "files.hpp"
#include "json_input.hpp"
#include "model/kv_eviction.hpp"
#include "number_args.hpp"
#include "number_text.hpp"
#include "stream/stream_report.hpp"
#include "tokenizer/llama_tokenizer.hpp"
#include "tokenizer_file.hpp"

namespace anatomy::native {
namespace {

struct StreamOptions {
    std::string model;
    std::string tokenizer;  // default: the folder's tokenizer.json (a llama2.c file needs one)
    std::string text;
    std::string window = "64";
    std::string sinks = "4";
    std::string length = "2000";
    std::string dtype = "float32";
    std::string generate = "0";
    bool json = false;
};

// Where keep_all's positions (0 to read - 1) and the windowed policies' (0 to W - 1)
// run, against the trained ones (0 to trained - 1), for a run where keep_all passes them.
std::string positions_line(std::size_t read, std::size_t W, std::size_t trained) {
    const std::string windowed = W <= trained ? "stay within them (positions 0 to " + std::to_string(W - 1) + ")"
                                              : "reach position " + std::to_string(W - 1) + ", past them too";
    return "keep_all reaches position " + std::to_string(read - 1) + ", past the positions the model was trained on (0 to " +
           std::to_string(trained - 1) + "); the windowed policies " + windowed + ".";
}

int run_stream(const StreamOptions& o) {
    const std::size_t W = parse_decimal(o.window, "--window", 1, 1 << 16);
    const std::size_t K = parse_decimal(o.sinks, "--sinks", 0, 1 << 16);
    const std::size_t length = parse_decimal(o.length, "--length", 2, 1 << 20);
    if (o.dtype != "float32" && o.dtype != "float64") throw InputError("unknown --dtype '" + o.dtype + "' (expected float32 or float64)");
    const std::size_t generate = parse_decimal(o.generate, "--generate", 0, 10000);
    try {
        require_sinks_inside_window(W, K);
    } catch (const InputError& e) {  // the core's words, after the flags that set them
        throw InputError("--sinks " + std::to_string(K) + ", --window " + std::to_string(W) + ": " + e.what());
    }

    // Every input is read and checked before the decoding starts.
    const std::string text = read_text_file(o.text);
    const LoadedCheckpoint loaded = load_checkpoint(o.model);
    const Model<float>& model = loaded.model;
    const LlamaTokenizer tokenizer = checkpoint_tokenizer(o.model, o.tokenizer, loaded.llama2c, model.config.vocab_size);
    std::vector<std::int32_t> ids = tokenizer.encode(text, true);
    if (ids.size() > length) ids.resize(length);
    try {
        require_tokens_past_window(ids.size(), W);
    } catch (const InputError& e) {
        throw InputError("--text " + o.text + ", --window " + std::to_string(W) + ": " + e.what());
    }
    // keep_all passing the trained positions is what the comparison shows; a window past them is worth a warning.
    warn_if_past_trained_positions(loaded.trained_positions, W, o.model, "the windowed policies (--window " + std::to_string(W) + ") reach");

    const StreamReport report = o.dtype == "float64" ? stream_report(cast_model<double>(model), ids, W, K, generate)
                                                     : stream_report(model, ids, W, K, generate);
    nlohmann::json json = {{"model", o.model}, {"text", o.text}, {"dtype", o.dtype},
                           {"trained_positions", loaded.trained_positions ? nlohmann::json(*loaded.trained_positions) : nlohmann::json(nullptr)}};
    json.update(stream_report_json(report, tokenizer));
    if (o.json) {
        std::cout << json_text(json) << "\n";
        return 0;
    }
    std::cout << "attn stream: " << ids.size() << " tokens of " << o.text << " through a cache of " << W << " entries ("
              << K << " sinks kept by sinks_and_window); the first eviction comes at token " << report.first_eviction_at << "\n\n";
    std::cout << "policy              loss after eviction  departs from recompute_window (by > " << stream_departure_nats << " nats)\n";
    for (const nlohmann::json& p : json["policies"]) {
        const std::string name = p["policy"];
        const double mean = p["mean_loss_after_first_eviction"];
        std::cout << name << std::string(20 - name.size(), ' ') << number_text("%.4f", mean) << " nats/token   ";
        if (!p.contains("departs_from_reference_at")) std::cout << "(the reference)";
        else if (p["departs_from_reference_at"].is_null()) std::cout << "never";
        else std::cout << "at token " << p["departs_from_reference_at"].get<std::int64_t>();
        std::cout << "\n";
    }
    if (generate) {
        std::cout << "\ncontinuations (" << generate << " tokens, greedy):\n";
        for (const nlohmann::json& p : json["policies"]) {
            std::string text = p["continuation"]["text"];
            for (char& c : text) if (c == '\n') c = ' ';
            const std::string name = p["policy"];
            std::cout << "  " << name << std::string(20 - name.size(), ' ') << json_text(text) << "\n";
        }
    }
    if (loaded.trained_positions && std::int64_t(tokens_read(report)) > *loaded.trained_positions)
        std::cout << "\n" << positions_line(tokens_read(report), W, std::size_t(*loaded.trained_positions)) << "\n";
    return 0;
}

}  // namespace

CommandRunner add_stream_command(CLI::App& app) {
    auto options = std::make_shared<StreamOptions>();
    CLI::App* cmd = app.add_subcommand("stream", "Decode a long text through a KV cache of W entries under each eviction policy "
                                                 "(keep everything, sliding window, sinks plus window) against recomputing each window");
    cmd->add_option("--model", options->model, "A Hugging Face Llama folder, or a llama2.c .bin file")->required();
    cmd->add_option("--tokenizer", options->tokenizer, "A tokenizer.json or llama2.c tokenizer.bin (default: the folder's tokenizer.json)");
    cmd->add_option("--text", options->text, "The text to decode (UTF-8)")->required();
    cmd->add_option("--window", options->window, "W: the most entries the cache holds")->capture_default_str();
    cmd->add_option("--sinks", options->sinks, "K: the first entries sinks_and_window keeps (fewer than W)")->capture_default_str();
    cmd->add_option("--length", options->length, "Decode at most this many tokens of the text")->capture_default_str();
    cmd->add_option("--generate", options->generate, "Then continue the text by this many tokens under each policy (greedy)")->capture_default_str();
    cmd->add_option("--dtype", options->dtype, "float32 (as the model runs) or float64 (to compare with a reference)")->capture_default_str();
    cmd->add_flag("--json", options->json, "Print the report, with every position's loss, as JSON");
    return [options] { return run_stream(*options); };
}

}  // namespace anatomy::native
