#include "llama_tokenizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <queue>

#include <nlohmann/json.hpp>

#include "../json_input.hpp"
#include "../tensor.hpp"
#include "utf8.hpp"

namespace anatomy {
namespace {

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (std::uint64_t(std::uint32_t(left)) << 32) | std::uint32_t(right);
}

// Splits valid UTF-8 text into code points (each as its bytes).
std::vector<std::string> utf8_characters(std::string_view text) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = std::max<std::size_t>(1, utf8_sequence_length(text, i));
        out.emplace_back(text.substr(i, length));
        i += length;
    }
    return out;
}

// JavaScript's String.length: UTF-16 code units (characters above U+FFFF count twice).
double utf16_length(const std::vector<std::string>& characters) {
    double units = 0;
    for (const std::string& c : characters) units += c.size() == 4 ? 2 : 1;
    return units;
}

// The byte a piece "<0xHH>" stands for (two hex digits), or -1 for any other piece.
int byte_piece_value(const std::string& piece) {
    const auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
    const int high = hex(piece[3]), low = hex(piece[4]);
    return high < 0 || low < 0 ? -1 : high * 16 + low;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// tokenizer.json's `name` (a key of `parent`), which must be an object (`object`)
// or a list; throws InputError saying whether it is missing or of another kind, and
// what it should be (`expected`).
const nlohmann::json& tokenizer_part(const nlohmann::json& parent, const char* key, const std::string& name, bool object,
                                     const std::string& expected) {
    if (!parent.contains(key)) throw InputError("tokenizer.json: " + name + " is missing; expected " + expected);
    const nlohmann::json& part = parent[key];
    if (object ? !part.is_object() : !part.is_array())
        throw InputError("tokenizer.json: " + name + " is " + json_kind(part) + "; expected " + expected);
    return part;
}

}  // namespace

std::string byte_piece(int byte) {
    const char* digits = "0123456789ABCDEF";
    return std::string("<0x") + digits[(byte >> 4) & 15] + digits[byte & 15] + ">";
}

LlamaTokenizer LlamaTokenizer::from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InputError("tokenizer.json: the file holds " + json_kind(j) + "; expected an object with a \"model\"");
    const nlohmann::json& model = tokenizer_part(j, "model", "model", true, "an object with a BPE vocab and merges");
    if (model.contains("type") && model["type"] != "BPE")
        throw InputError("tokenizer.json: model type " + json_text(model["type"]) + " is not BPE");
    const nlohmann::json& vocab = tokenizer_part(model, "vocab", "model.vocab", true, "an object mapping each token to its id, {\"<s>\": 1, ...}");
    const nlohmann::json& merges = tokenizer_part(model, "merges", "model.merges", false, "a list of merges, each \"a b\" or [\"a\", \"b\"]");

    LlamaTokenizer t;
    t.pieces_.resize(vocab.size());
    std::vector<bool> seen(vocab.size(), false);
    for (const auto& [piece, id] : vocab.items()) {
        if (!id.is_number_integer())
            throw InputError("tokenizer.json: the id of '" + piece + "' in model.vocab is " + json_kind(id) + "; expected a whole number");
        if (id.get<std::int64_t>() < 0 || id.get<std::uint64_t>() >= vocab.size())
            throw InputError("tokenizer.json: the id of '" + piece + "' is " + json_text(id) + ", outside 0 to " +
                             std::to_string(vocab.size() - 1) + " (model.vocab holds " + std::to_string(vocab.size()) +
                             (vocab.size() == 1 ? " token)" : " tokens)"));
        const std::size_t index = id.get<std::size_t>();
        if (seen[index]) throw InputError("tokenizer.json: id " + std::to_string(index) + " is used twice");
        seen[index] = true;
        t.pieces_[index] = piece;
        t.ids_[piece] = std::int32_t(index);
    }
    for (int b = 0; b < 256; ++b) {
        const auto it = t.ids_.find(byte_piece(b));
        t.byte_ids_[b] = it == t.ids_.end() ? -1 : it->second;
    }
    std::int32_t rank = 0;
    for (const nlohmann::json& merge : merges) {
        std::string left, right;
        if (merge.is_string()) {  // "a b"
            const std::string text = merge.get<std::string>();
            const std::size_t space = text.find(' ');
            if (space == std::string::npos) throw InputError("tokenizer.json: merge '" + text + "' has no space");
            left = text.substr(0, space);
            right = text.substr(space + 1);
        } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {  // ["a", "b"]
            left = merge[0].get<std::string>();
            right = merge[1].get<std::string>();
        } else {
            throw InputError("tokenizer.json: merge " + json_text(merge) + " is neither \"a b\" nor [\"a\", \"b\"]");
        }
        ++rank;
        const auto l = t.ids_.find(left), r = t.ids_.find(right), m = t.ids_.find(left + right);
        if (l == t.ids_.end() || r == t.ids_.end() || m == t.ids_.end()) continue;  // unusable merge
        t.ranks_.emplace(pair_key(l->second, r->second), rank);  // the first (highest-priority) wins
    }
    // Text as it is when the file says so: a normalizer and a pre-tokenizer both
    // null, as Hugging Face writes a tokenizer without them (attn train's character
    // vocabulary). Such a vocabulary has only the special tokens it names.
    const bool as_is = j.contains("normalizer") && j["normalizer"].is_null() && j.contains("pre_tokenizer") &&
                       j["pre_tokenizer"].is_null();
    t.marks_spaces_ = !as_is;
    // The special tokens are the pieces that name them; a vocabulary without one has
    // none (-1), rather than an id that holds some other piece.
    auto special = [&](const char* name) {
        const auto it = t.ids_.find(name);
        return it != t.ids_.end() ? it->second : -1;
    };
    t.unk_id_ = special("<unk>");
    t.bos_id_ = special("<s>");
    t.eos_id_ = special("</s>");
    return t;
}

LlamaTokenizer LlamaTokenizer::from_llama2c(const std::uint8_t* bytes, std::size_t size, int vocab_size,
                                            const std::string& source) {
    auto fail = [&](const std::string& what) { return InputError(source + ": " + what); };
    // Without a model (vocab_size 0), as many pieces as the file holds.
    const bool every_piece = vocab_size <= 0;
    if (every_piece) vocab_size = std::numeric_limits<int>::max();
    std::size_t at = 0;
    auto read = [&](void* out, std::size_t n, int id) {
        if (size - at < n)
            throw fail(every_piece ? "the tokenizer ends inside piece " + std::to_string(id) + ": the file is cut short"
                                   : "the tokenizer ends at piece " + std::to_string(id) + " of the model's " +
                                         std::to_string(vocab_size) + " (is it the tokenizer of this model?)");
        std::memcpy(out, bytes + at, n);
        at += n;
    };
    std::int32_t max_length = 0;
    if (size < 4) throw fail("shorter than the tokenizer.bin header");
    read(&max_length, 4, 0);
    // llama2.c's tokenizers have pieces of at most a few dozen bytes.
    if (max_length < 1 || max_length > 65536)
        throw fail("its first 4 bytes give a longest piece of " + std::to_string(max_length) +
                   " bytes: not a llama2.c tokenizer.bin (they give 1 to 65,536)");
    LlamaTokenizer t;
    std::vector<float> scores;
    for (int id = 0; id < vocab_size && !(every_piece && at == size); ++id) {
        t.pieces_.emplace_back();
        scores.emplace_back();
        std::int32_t length = 0;
        read(&scores.back(), 4, id);
        if (!std::isfinite(scores.back()))
            throw fail("piece " + std::to_string(id) + " has a score that is not finite (" + std::to_string(scores.back()) + ")");
        read(&length, 4, id);
        if (length < 0 || length > max_length)
            throw fail("piece " + std::to_string(id) + " gives its length as " + std::to_string(length) +
                       " bytes, outside 0 to the header's longest piece, " + std::to_string(max_length) +
                       ": not a llama2.c tokenizer.bin, or a damaged one");
        std::string piece(std::size_t(length), '\0');
        read(piece.data(), std::size_t(length), id);
        if (first_invalid_utf8(piece)) throw fail("piece " + std::to_string(id) + " is not UTF-8 (" + invalid_utf8_text(piece) + ")");
        piece = replace_all(piece, " ", space_marker);  // llama2.c's export wrote "▁" as ' '
        t.ids_.emplace(piece, id);  // the first id of a piece held twice wins, as llama2.c's lookup does
        t.pieces_.back() = std::move(piece);
    }
    vocab_size = int(t.pieces_.size());
    if (at != size)
        throw fail(std::to_string(size - at) + " bytes follow the model's " + std::to_string(vocab_size) +
                   " pieces: the tokenizer has more pieces than the model's vocabulary (is it the tokenizer of this model?)");
    for (int b = 0; b < 256; ++b) {
        const auto it = t.ids_.find(byte_piece(b));
        t.byte_ids_[b] = it == t.ids_.end() ? -1 : it->second;
    }
    // Every split of a piece into two pieces is a merge, ranked by the merged piece's
    // score (highest first; equal scores share a rank, and encode breaks the tie leftmost).
    struct Merge {
        float score;
        std::int32_t left, right;
    };
    std::vector<Merge> merges;
    for (int id = 0; id < vocab_size; ++id) {
        const std::string& piece = t.pieces_[std::size_t(id)];
        if (t.ids_.at(piece) != id) continue;
        for (std::size_t k = 1; k < piece.size(); ++k) {
            const auto l = t.ids_.find(piece.substr(0, k)), r = t.ids_.find(piece.substr(k));
            if (l != t.ids_.end() && r != t.ids_.end()) merges.push_back({scores[std::size_t(id)], l->second, r->second});
        }
    }
    std::sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
    std::int32_t rank = 0;
    for (std::size_t i = 0; i < merges.size(); ++i) {
        if (i == 0 || merges[i].score != merges[i - 1].score) ++rank;
        t.ranks_.emplace(pair_key(merges[i].left, merges[i].right), rank);
    }
    // llama2.c's layout: ids 0, 1, 2 are unk, BOS and EOS, in a vocabulary that has them.
    t.unk_id_ = vocab_size > 0 ? 0 : -1;
    t.bos_id_ = vocab_size > 1 ? 1 : -1;
    t.eos_id_ = vocab_size > 2 ? 2 : -1;
    return t;
}

std::vector<std::int32_t> LlamaTokenizer::encode(std::string_view text, bool add_bos) const {
    if (text.empty()) return {};
    if (first_invalid_utf8(text)) throw InputError("the text is not UTF-8: " + invalid_utf8_text(text));
    const std::vector<std::string> original = utf8_characters(text);
    const double length = utf16_length(original);

    // Characters to ids: " " + text with every space as "▁" (or the text as it is);
    // unknown characters as UTF-8 byte tokens, or the unknown token.
    std::vector<std::int32_t> ids;
    if (add_bos) {
        if (bos_id_ < 0) throw InputError("this vocabulary has no beginning-of-text token <s>");
        ids.push_back(bos_id_);
    }
    const std::string prepared = marks_spaces_ ? replace_all(" " + std::string(text), " ", space_marker) : std::string(text);
    for (const std::string& c : utf8_characters(prepared)) {
        const auto it = ids_.find(c);
        if (it != ids_.end()) {
            ids.push_back(it->second);
            continue;
        }
        for (unsigned char byte : c) {
            const std::int32_t id = byte_ids_[byte] >= 0 ? byte_ids_[byte] : unk_id_;
            if (id < 0) throw InputError("the character '" + c + "' is not in this model's vocabulary");
            ids.push_back(id);
        }
    }

    // A doubly linked list of tokens. A node keeps the position it started at; a
    // merged node takes its left half's. Merged-away nodes are marked deleted.
    struct Node {
        std::int32_t id;
        int prev, next;
        double origin;
        bool deleted;
    };
    std::vector<Node> nodes;
    for (std::size_t i = 0; i < ids.size(); ++i)
        nodes.push_back({ids[i], int(i) - 1, i + 1 < ids.size() ? int(i) + 1 : -1, double(i), false});

    // Possible merges, best (lowest) priority first: rank + origin / length.
    struct Candidate {
        double priority;
        int left, right;
        bool operator<(const Candidate& other) const { return priority > other.priority; }
    };
    std::priority_queue<Candidate> queue;
    auto consider = [&](int left) {
        if (left < 0 || nodes[left].next < 0) return;
        const int right = nodes[left].next;
        const auto rank = ranks_.find(pair_key(nodes[left].id, nodes[right].id));
        if (rank != ranks_.end()) queue.push({double(rank->second) + nodes[left].origin / length, left, right});
    };
    for (int i = 0; i + 1 < int(nodes.size()); ++i) consider(i);

    while (!queue.empty()) {
        const Candidate best = queue.top();
        queue.pop();
        // Stale: one half was merged away since this candidate was queued.
        if (nodes[best.left].deleted || nodes[best.right].deleted || nodes[best.left].next != best.right) continue;
        nodes[best.left].deleted = nodes[best.right].deleted = true;
        const Node merged{ids_.at(pieces_[nodes[best.left].id] + pieces_[nodes[best.right].id]), nodes[best.left].prev,
                          nodes[best.right].next, nodes[best.left].origin, false};
        nodes.push_back(merged);
        const int fresh = int(nodes.size()) - 1;
        if (merged.prev >= 0) nodes[merged.prev].next = fresh;
        if (merged.next >= 0) nodes[merged.next].prev = fresh;
        consider(merged.prev);  // (prev, merged)
        consider(fresh);        // (merged, next)
    }

    // Walk the surviving list from its head.
    std::vector<std::int32_t> out;
    int head = -1;
    for (int i = 0; i < int(nodes.size()); ++i)
        if (!nodes[i].deleted && nodes[i].prev < 0) head = i;
    for (int at = head; at >= 0; at = nodes[at].next) out.push_back(nodes[at].id);
    return out;
}

std::string LlamaTokenizer::decode(const std::vector<std::int32_t>& ids, bool starts_text) const {
    std::string bytes;
    for (std::int32_t id : ids) {
        if (id < 0 || std::size_t(id) >= pieces_.size()) throw InputError("token id " + std::to_string(id) + " is outside the vocabulary");
        if (id == bos_id_ || id == eos_id_ || id == unk_id_) continue;
        const std::string& p = pieces_[std::size_t(id)];
        if (const int value = byte_piece_value(p); value >= 0)
            bytes.push_back(char(value));
        else
            bytes += p;
    }
    if (!marks_spaces_) return utf8_with_replacements(bytes);
    std::string text = replace_all(bytes, space_marker, " ");
    if (starts_text && !text.empty() && text[0] == ' ') text.erase(0, 1);  // the space encode put before the text
    return utf8_with_replacements(text);
}

const std::string& LlamaTokenizer::piece(std::int32_t id) const {
    if (id < 0 || std::size_t(id) >= pieces_.size()) throw InputError("token id " + std::to_string(id) + " is outside the vocabulary");
    return pieces_[std::size_t(id)];
}

std::string LlamaTokenizer::display(std::int32_t id) const {
    const std::string& p = piece(id);
    if (const int value = byte_piece_value(p); value >= 0) {
        if (value == '\n' || value == '\t' || (value >= 0x20 && value < 0x7F)) return std::string(1, char(value));
        return p;
    }
    return marks_spaces_ ? replace_all(p, space_marker, " ") : p;
}

}  // namespace anatomy
