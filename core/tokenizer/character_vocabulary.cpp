#include "character_vocabulary.hpp"

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../tensor.hpp"
#include "utf8.hpp"

namespace anatomy {

void require_utf8_text(std::string_view text) {
    if (text.empty()) throw InputError("the text is empty");
    if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw InputError("the text holds a NUL byte at offset " + std::to_string(nul) + ": a binary file, not text");
    if (first_invalid_utf8(text)) throw InputError("the text is not UTF-8: " + invalid_utf8_text(text));
}

nlohmann::json character_tokenizer_json(std::string_view text) {
    require_utf8_text(text);
    std::set<std::string> characters;  // byte order of UTF-8 is code-point order
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = utf8_sequence_length(text, at);
        characters.emplace(text.substr(at, length));
        at += length;
    }
    nlohmann::json vocab = nlohmann::json::object();
    vocab["<s>"] = 0;
    int id = 1;
    for (const std::string& c : characters) vocab[c] = id++;
    const nlohmann::json bos = {{"id", 0},           {"content", "<s>"}, {"single_word", false}, {"lstrip", false},
                                {"rstrip", false},   {"normalized", false}, {"special", true}};
    return {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", {bos}},
        {"normalizer", nullptr},
        {"pre_tokenizer", nullptr},
        {"post_processor", nullptr},
        {"decoder", {{"type", "Fuse"}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"vocab", vocab},
          {"merges", nlohmann::json::array()}}},
    };
}

}  // namespace anatomy
