#include "synthetic_tokenizer.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tensor.hpp"
#include "llama_tokenizer.hpp"

namespace anatomy {
namespace {

// Lowercase letters by their frequency in English text, so the early merges are useful ones.
const std::string letters = "etaoinshrdlcumwfgypbvkjxqz";

// Printable ASCII after the lowercase letters: uppercase, digits, then punctuation.
std::vector<std::string> single_characters() {
    std::vector<std::string> out;
    for (char c : letters) out.emplace_back(1, c);
    for (char c = 'A'; c <= 'Z'; ++c) out.emplace_back(1, c);
    for (char c = '0'; c <= '9'; ++c) out.emplace_back(1, c);
    for (char c = 0x21; c <= 0x7E; ++c)
        if (!std::isalnum(static_cast<unsigned char>(c))) out.emplace_back(1, c);
    return out;  // 94 characters: every printable ASCII character except the space
}

nlohmann::json added_token(int id, const char* content) {
    return {{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", false}, {"special", true}};
}

}  // namespace

nlohmann::json synthetic_tokenizer_json(int vocab_size) {
    if (vocab_size < 4) throw InputError("a synthetic tokenizer needs a vocabulary of at least 4 pieces");
    const std::size_t V = std::size_t(vocab_size);
    std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
    const std::vector<std::string> characters = single_characters();
    if (V >= 3 + 256 + 1 + characters.size())
        for (int b = 0; b < 256; ++b) pieces.push_back(byte_piece(b));
    pieces.push_back(space_marker);
    for (const std::string& c : characters)
        if (pieces.size() < V) pieces.push_back(c);

    // Merges by length: a piece of n letters (with or without a leading "▁") plus one
    // more letter. Generation k extends every piece of generation k - 1, in the
    // order those were created, by every letter in frequency order.
    nlohmann::json merges = nlohmann::json::array();
    std::set<std::string> known(pieces.begin(), pieces.end());
    std::vector<std::string> previous = {space_marker};
    for (char c : letters) previous.emplace_back(1, c);
    while (pieces.size() < V && !previous.empty()) {
        std::vector<std::string> next;
        for (const std::string& left : previous) {
            for (char c : letters) {
                if (pieces.size() >= V) break;
                const std::string right(1, c), merged = left + right;
                if (!known.insert(merged).second) continue;
                pieces.push_back(merged);
                merges.push_back(left + " " + right);
                next.push_back(merged);
            }
        }
        previous = std::move(next);
    }

    nlohmann::json vocab = nlohmann::json::object();
    for (std::size_t id = 0; id < pieces.size(); ++id) vocab[pieces[id]] = id;
    const bool byte_fallback = pieces.size() > 3 && pieces[3] == "<0x00>";
    return {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", {added_token(0, "<unk>"), added_token(1, "<s>"), added_token(2, "</s>")}},
        {"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "Prepend"}, {"prepend", space_marker}},
            {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", space_marker}}}}}},
        {"pre_tokenizer", nullptr},
        {"post_processor",
         {{"type", "TemplateProcessing"},
          {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"pair",
           {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
            {{"SpecialToken", {{"id", "<s>"}, {"type_id", 1}}}},
            {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
          {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
        {"decoder",
         {{"type", "Sequence"},
          {"decoders",
           {{{"type", "Replace"}, {"pattern", {{"String", space_marker}}}, {"content", " "}},
            {{"type", "ByteFallback"}},
            {{"type", "Fuse"}},
            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", "<unk>"},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", true},
          {"byte_fallback", byte_fallback},
          {"vocab", vocab},
          {"merges", merges}}},
    };
}

std::vector<std::uint8_t> synthetic_tokenizer_bin(int vocab_size) {
    const nlohmann::json j = synthetic_tokenizer_json(vocab_size);
    std::vector<std::string> pieces(j["model"]["vocab"].size());
    for (const auto& [piece, id] : j["model"]["vocab"].items()) pieces[id.get<std::size_t>()] = piece;
    std::vector<float> scores(pieces.size(), 0.0f);
    std::map<std::string, std::size_t> id_of;
    for (std::size_t id = 0; id < pieces.size(); ++id) id_of.emplace(pieces[id], id);
    float rank = 0;
    for (const nlohmann::json& merge : j["model"]["merges"]) {
        std::string text = merge.get<std::string>();
        text.erase(text.find(' '), 1);  // "a b" -> the merged piece "ab"
        scores[id_of.at(text)] = -(++rank);
    }
    std::int32_t longest = 0;
    std::vector<std::string> written;
    for (const std::string& piece : pieces) {
        std::string bytes = piece;
        for (std::size_t at = bytes.find(space_marker); at != std::string::npos; at = bytes.find(space_marker, at + 1))
            bytes.replace(at, space_marker.size(), " ");
        longest = std::max(longest, std::int32_t(bytes.size()));
        written.push_back(std::move(bytes));
    }
    std::vector<std::uint8_t> out;
    auto put = [&](const void* p, std::size_t n) {
        const auto* b = static_cast<const std::uint8_t*>(p);
        out.insert(out.end(), b, b + n);
    };
    put(&longest, 4);
    for (std::size_t id = 0; id < written.size(); ++id) {
        const std::int32_t length = std::int32_t(written[id].size());
        put(&scores[id], 4);
        put(&length, 4);
        put(written[id].data(), written[id].size());
    }
    return out;
}

}  // namespace anatomy
