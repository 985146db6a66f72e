// attn diff: a learner's intermediate tensors (.npz or .safetensors, names as in
// docs/diff.md) against the core's forward on the same checkpoint and tokens: every
// tensor compared, the first that diverges, and the mistake it matches, if any.
// Exit 0: all agree; 1: a divergence; 2: bad input.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "checkpoint_dir.hpp"
#include "commands.hpp"
#include "diff/diff.hpp"
#include "files.hpp"
#include "json_input.hpp"
#include "number_args.hpp"
#include "token_list.hpp"

namespace anatomy::native {
namespace {

struct DiffOptions {
    std::string checkpoint;
    std::string tokens;   // "1,2,3" or "1,2,3;4,5,6": one sequence per ';'
    std::string theirs;
    std::string cached = "0";  // the first N tokens of each sequence through the KV cache first
    bool json = false;
};

//   "1,2;3,4"  ->  [2, 2]
TokenIds parse_sequences(const std::string& text, int vocab_size) {
    std::vector<std::vector<std::int32_t>> rows;
    std::stringstream parts(text);
    for (std::string part; std::getline(parts, part, ';');) rows.push_back(parse_token_list(part, vocab_size));
    if (rows.empty()) throw InputError("--tokens is empty");
    TokenIds tokens = TokenIds::from_shape({rows.size(), rows.front().size()});
    for (std::size_t b = 0; b < rows.size(); ++b) {
        if (rows[b].size() != rows.front().size())
            throw InputError("--tokens: sequence " + std::to_string(b) + " has " + std::to_string(rows[b].size()) + " and sequence 0 " +
                             std::to_string(rows.front().size()) + " tokens (all must be equally long)");
        std::copy(rows[b].begin(), rows[b].end(), &tokens(b, 0));
    }
    return tokens;
}

// A number of the report as printf's %.3g writes it; null (an unbounded error) as
// "inf", and a value that is not finite as the report names it ("nan", "inf", "-inf").
std::string number(const nlohmann::json& x) {
    if (x.is_null()) return "inf";
    if (x.is_string()) return x.get<std::string>();
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", x.get<double>());
    return text;
}

void print_report(const nlohmann::json& r, const DiffOptions& o, std::size_t cached, std::size_t given) {
    const std::size_t B = r["tokens"].size(), T = r["tokens"][0].size();
    std::cout << "attn diff: " << o.theirs << " against " << o.checkpoint << ", " << B << (B == 1 ? " sequence" : " sequences") << " of " << T
              << (T == 1 ? " token" : " tokens") << (cached ? " (the first " + std::to_string(cached) + " through the KV cache first)" : "")
              << ", " << given << (given == 1 ? " tensor" : " tensors") << " given\n";
    std::printf("  %-22s %-8s %11s %11s %17s  %s\n", "tensor", "dtype", "max |err|", "max rel", "atol, rtol", "");
    for (const nlohmann::json& c : r["compared"]) {
        const std::size_t mismatches = c["mismatches"].get<std::size_t>();
        const std::string status = c["agrees"].get<bool>() ? "agrees" : "DIVERGES (" + std::to_string(mismatches) + (mismatches == 1 ? " value)" : " values)");
        const std::string tol = number(c["tolerance"]["atol"]) + ", " + number(c["tolerance"]["rtol"]);
        std::printf("  %-22s %-8s %11s %11s %17s  %s\n", c["name"].get<std::string>().c_str(), c["precision"].get<std::string>().c_str(),
                    number(c["max_abs_error"]).c_str(), number(c["max_rel_error"]).c_str(), tol.c_str(), status.c_str());
    }
    const nlohmann::json& d = r["first_divergence"];
    if (d.is_null()) {
        std::cout << "Every tensor given agrees with the core.\n";
        return;
    }
    std::cout << "First divergence: " << d["tensor"].get<std::string>();
    if (d.contains("layer")) std::cout << ", layer " << d["layer"];
    for (const nlohmann::json& axis : d["axes"]) std::cout << ", " << axis.get<std::string>() << " " << d[axis.get<std::string>()];
    std::cout << ": ours " << number(d["ours"]) << ", theirs " << number(d["theirs"]) << "\n";
    if (!r["diagnosis"].is_null()) {
        std::cout << "Diagnosis: " << r["diagnosis"]["mistake"].get<std::string>() << ": " << r["diagnosis"]["description"].get<std::string>()
                  << ". On the same inputs, the core computing that mistake gives your values.\n";
    } else if (!r["mistakes_tried"].empty()) {
        std::cout << "No known mistake gives these values (tried";
        for (const nlohmann::json& m : r["mistakes_tried"]) std::cout << " " << m.get<std::string>();
        std::cout << "). Everything before this tensor agreed, so the operation computing it is where to look.\n";
    } else if (r["compared"].size() > 1) {
        std::cout << "The tensors you gave before it agree; give the ones just before it (docs/diff.md lists them in order) to narrow the search.\n";
    } else {
        std::cout << "It is the first tensor you gave; give the ones before it (docs/diff.md lists them in order) to find where the difference starts.\n";
    }
}

int run_diff(const DiffOptions& o) {
    const std::size_t cached = parse_decimal(o.cached, "--cached", 0, 1 << 20);
    const LoadedCheckpoint checkpoint = load_checkpoint(o.checkpoint);
    const Model<float>& model = checkpoint.model;
    const TokenIds tokens = parse_sequences(o.tokens, model.config.vocab_size);
    warn_if_past_trained_positions(checkpoint.trained_positions, tokens.shape(1), o.checkpoint);
    const MappedFile file(o.theirs);
    const auto theirs = read_learner_tensors(file.data(), file.size(), o.theirs);
    const nlohmann::json report = diff_report(model, tokens, theirs, cached);
    if (o.json) std::cout << json_text(report, 2) << "\n";
    else print_report(report, o, cached, theirs.size());
    return report["agrees"].get<bool>() ? 0 : 1;
}

}  // namespace

CommandRunner add_diff_command(CLI::App& app) {
    auto options = std::make_shared<DiffOptions>();
    CLI::App* cmd = app.add_subcommand(
        "diff", "Compare your implementation's intermediate tensors with the core's, name the first that diverges and the mistake it matches");
    cmd->add_option("--checkpoint", options->checkpoint, "A checkpoint the core reads (Hugging Face folder or llama2.c .bin)")->required();
    cmd->add_option("--tokens", options->tokens, "Token ids, e.g. 1,5,9,2; several sequences of equal length separated by ';'")->required();
    cmd->add_option("--theirs", options->theirs, "Your tensors: .npz (np.savez) or .safetensors, names as in docs/diff.md")->required();
    cmd->add_option("--cached", options->cached,
                    "Run the first N tokens of each sequence through the KV cache first; your tensors are for the rest");
    cmd->add_flag("--json", options->json, "Print the report as JSON");
    return [options] { return run_diff(*options); };
}

}  // namespace anatomy::native
