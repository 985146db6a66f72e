// attn tokenize: a Llama tokenizer (a tokenizer.json, or a llama2.c tokenizer.bin) on one text or a batch.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "files.hpp"
#include "json_input.hpp"
#include "tensor.hpp"
#include "tokenizer/llama_tokenizer.hpp"
#include "tokenizer_file.hpp"

namespace anatomy::native {
namespace {

// A token's text on one line of the listing: a newline or a tab written as \n or \t.
std::string one_line(const std::string& text) {
    std::string out;
    for (const char c : text) out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : std::string(1, c);
    return out;
}

struct TokenizeOptions {
    std::string tokenizer;
    std::string text;
    bool text_given = false;
    std::string batch;   // a JSON file holding a list of strings
    bool no_bos = false;
    bool json = false;
};

int run_tokenize(const TokenizeOptions& o) {
    if (o.text_given == !o.batch.empty()) throw InputError("tokenize takes either TEXT or --batch FILE");
    const LlamaTokenizer tokenizer = read_tokenizer_file(o.tokenizer);
    if (!o.no_bos && tokenizer.bos_id() < 0)
        throw InputError(o.tokenizer + " has no beginning-of-text token <s> to put first: give --no-bos");
    if (!o.batch.empty()) {
        const nlohmann::json texts = read_json_file(o.batch);
        if (!texts.is_array()) throw InputError(o.batch + " must hold a JSON list of strings");
        nlohmann::json out = nlohmann::json::array();
        for (const nlohmann::json& text : texts) {
            if (!text.is_string()) throw InputError(o.batch + " must hold only strings, found " + json_kind(text));
            out.push_back(tokenizer.encode(text.get<std::string>(), !o.no_bos));
        }
        std::cout << json_text(out) << "\n";
        return 0;
    }
    const std::vector<std::int32_t> ids = tokenizer.encode(o.text, !o.no_bos);
    if (o.json) {
        nlohmann::json pieces = nlohmann::json::array();
        for (std::int32_t id : ids) pieces.push_back(tokenizer.piece(id));
        std::cout << json_text(nlohmann::json{{"ids", ids}, {"pieces", pieces}, {"decoded", tokenizer.decode(ids)}}) << "\n";
        return 0;
    }
    for (std::size_t i = 0; i < ids.size(); ++i) std::cout << (i ? "," : "") << ids[i];
    std::cout << "\n";
    for (std::int32_t id : ids) std::cout << id << "\t" << one_line(tokenizer.display(id)) << "\n";
    return 0;
}

}  // namespace

CommandRunner add_tokenize_command(CLI::App& app) {
    auto options = std::make_shared<TokenizeOptions>();
    CLI::App* cmd = app.add_subcommand("tokenize", "Encode text with a Llama tokenizer: a tokenizer.json or a llama2.c tokenizer.bin (SentencePiece BPE, byte fallback)");
    cmd->add_option("--tokenizer", options->tokenizer, "A tokenizer.json, or a llama2.c tokenizer.bin")->required();
    cmd->add_option("text", options->text, "Text to encode")->each([options](const std::string&) { options->text_given = true; });
    cmd->add_option("--batch", options->batch, "A JSON file with a list of strings; prints a JSON list of id lists");
    cmd->add_flag("--no-bos", options->no_bos, "Do not start with the BOS token");
    cmd->add_flag("--json", options->json, "Print ids, pieces and the decoded text as JSON");
    return [options] { return run_tokenize(*options); };
}

}  // namespace anatomy::native
