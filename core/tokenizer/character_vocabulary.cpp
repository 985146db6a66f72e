#include "character_vocabulary.hpp"

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../tensor.hpp"

namespace anatomy {
namespace {

// The length of the UTF-8 sequence that starts at text[at], or 0 when none does
// there (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF,
// or a sequence cut short).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    std::size_t length = 0;
    std::uint32_t code = 0;
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) length = 2, code = lead & 0x1Fu;
    else if (lead >= 0xE0 && lead <= 0xEF) length = 3, code = lead & 0x0Fu;
    else if (lead >= 0xF0 && lead <= 0xF4) length = 4, code = lead & 0x07u;
    else return 0;
    if (at + length > text.size()) return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0u) != 0x80u) return 0;
        code = (code << 6) | (byte(at + i) & 0x3Fu);
    }
    const std::uint32_t smallest[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
    return length;
}

}  // namespace

void require_utf8_text(std::string_view text) {
    if (text.empty()) throw InputError("the text is empty");
    for (std::size_t at = 0; at < text.size();) {
        if (text[at] == '\0') throw InputError("the text holds a NUL byte at offset " + std::to_string(at) + ": a binary file, not text");
        const std::size_t length = utf8_sequence_length(text, at);
        if (length == 0) throw InputError("the text is not UTF-8 (byte offset " + std::to_string(at) + ")");
        at += length;
    }
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
