// attn stream: a long text decoded one token at a time through a KV cache of at most
// W entries, under each eviction policy (core/model/kv_eviction.hpp), against the
// reference that recomputes every prediction from the last W tokens
// (core/stream/stream_losses.hpp). For each policy: the mean loss over the positions
// after the first eviction, where it departs from the reference, and the loss of every
// position (with --json).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>

#include <nlohmann/json.hpp>

#include "checkpoint_dir.hpp"
#include "commands.hpp"
#include "files.hpp"
#include "json_input.hpp"
#include "number_args.hpp"
#include "number_text.hpp"
#include "stream/stream_losses.hpp"
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

// A policy's losses must differ from the reference's by more than this, in nats, to depart from it.
constexpr double departure = 0.01;

double mean_from(const std::vector<double>& losses, std::size_t from) {
    if (from >= losses.size()) return NAN;
    return std::accumulate(losses.begin() + std::ptrdiff_t(from), losses.end(), 0.0) / double(losses.size() - from);
}

// The first position whose loss differs from the reference's by more than `departure`, or -1.
std::int64_t departs_at(const std::vector<double>& losses, const std::vector<double>& reference) {
    for (std::size_t t = 0; t < losses.size(); ++t)
        if (!(std::abs(losses[t] - reference[t]) <= departure)) return std::int64_t(t);
    return -1;
}

int run_stream(const StreamOptions& o) {
    const std::size_t W = parse_decimal(o.window, "--window", 1, 1 << 16);
    const std::size_t K = parse_decimal(o.sinks, "--sinks", 0, 1 << 16);
    const std::size_t length = parse_decimal(o.length, "--length", 2, 1 << 20);
    if (o.dtype != "float32" && o.dtype != "float64") throw InputError("unknown --dtype '" + o.dtype + "' (expected float32 or float64)");
    const std::size_t generate = parse_decimal(o.generate, "--generate", 0, 10000);
    if (K >= W) throw InputError("--window " + std::to_string(W) + " must be larger than --sinks " + std::to_string(K) + " (the sinks are kept inside the window)");

    // Every input is read and checked before the decoding starts.
    const std::string text = read_text_file(o.text);
    const LoadedCheckpoint loaded = load_checkpoint(o.model);
    const Model<float>& model = loaded.model;
    const LlamaTokenizer tokenizer = checkpoint_tokenizer(o.model, o.tokenizer, loaded.llama2c, model.config.vocab_size);
    std::vector<std::int32_t> ids = tokenizer.encode(text, true);
    if (ids.size() > length) ids.resize(length);
    if (ids.size() <= W + 1)
        throw InputError(o.text + " gives " + std::to_string(ids.size()) + " tokens: a window of " + std::to_string(W) +
                         " evicts nothing before " + std::to_string(W + 2) + " (give a longer text or a smaller --window)");

    std::vector<std::pair<std::string, StreamRun>> runs;  // the three policies, then the reference
    const auto run_all = [&](const auto& m) {
        const std::pair<const char*, EvictionSpec> policies[] = {{"keep_all", {EvictionPolicy::keep_all, 0, 0}},
                                                                 {"sliding_window", {EvictionPolicy::sliding_window, W, 0}},
                                                                 {"sinks_and_window", {EvictionPolicy::sinks_and_window, W, K}}};
        for (const auto& [name, spec] : policies) runs.push_back({name, stream_through_cache(m, ids, spec, generate)});
        runs.push_back({"recompute_window", stream_recomputed(m, ids, W, generate)});
    };
    if (o.dtype == "float64") run_all(cast_model<double>(model));
    else run_all(model);
    const std::vector<double>& reference = runs.back().second.losses;

    // The first eviction comes when token W is read: the loss of predicting token W + 1 is the first after it.
    const std::size_t after = W;
    nlohmann::json report = {{"model", o.model}, {"text", o.text}, {"dtype", o.dtype}, {"tokens", ids.size()}, {"window", W}, {"sinks", K},
                             {"first_eviction_at", after}, {"trained_positions", loaded.trained_positions ? nlohmann::json(*loaded.trained_positions) : nlohmann::json(nullptr)},
                             {"departure_nats", departure}, {"policies", nlohmann::json::array()}};
    for (const auto& [name, run] : runs) {
        nlohmann::json p = {{"policy", name}, {"mean_loss_after_first_eviction", mean_from(run.losses, after)},
                            {"mean_loss", mean_from(run.losses, 0)}, {"losses", run.losses}};
        if (generate) p["continuation"] = {{"ids", run.continuation}, {"text", tokenizer.decode(run.continuation)}};
        if (&run.losses != &reference) {
            const std::int64_t at = departs_at(run.losses, reference);
            p["departs_from_reference_at"] = at < 0 ? nlohmann::json(nullptr) : nlohmann::json(at);
        }
        report["policies"].push_back(std::move(p));
    }
    if (o.json) {
        std::cout << json_text(report) << "\n";
        return 0;
    }
    std::cout << "attn stream: " << ids.size() << " tokens of " << o.text << " through a cache of " << W << " entries ("
              << K << " sinks kept by sinks_and_window); the first eviction comes at token " << after << "\n\n";
    std::cout << "policy              loss after eviction  departs from recompute_window (by > " << departure << " nats)\n";
    for (const nlohmann::json& p : report["policies"]) {
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
        for (const nlohmann::json& p : report["policies"]) {
            std::string text = p["continuation"]["text"];
            for (char& c : text) if (c == '\n') c = ' ';
            const std::string name = p["policy"];
            std::cout << "  " << name << std::string(20 - name.size(), ' ') << json_text(text) << "\n";
        }
    }
    if (loaded.trained_positions && std::int64_t(ids.size()) > *loaded.trained_positions)
        std::cout << "\nkeep_all reaches position " << ids.size() - 1 << ", past the " << *loaded.trained_positions
                  << " positions the model was trained on; the windowed policies never pass " << W - 1 << ".\n";
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
