// The Llama / TinyLlama SentencePiece-BPE tokenizer, read from a Hugging Face
// tokenizer.json: the "▁" (U+2581) space marker, merges in priority order,
// byte fallback (<0xNN> tokens for characters outside the vocabulary), BOS.
//
// A tokenizer.json whose normalizer and pre-tokenizer are both null (attn train's
// character vocabulary, tokenizer/character_vocabulary.hpp) takes text as it is:
// no leading space, no "▁", and only the special tokens it holds.
//
// Encoding follows the reference procedure used by llama-tokenizer-js (and
// Hugging Face's legacy Llama tokenizer): prepend a space, turn spaces into "▁",
// map each character to its token (or its UTF-8 bytes' <0xNN> tokens), then
// repeatedly apply the highest-priority merge. Priority is the merge's rank, ties
// broken left to right by adding position / length of the input in UTF-16 units,
// exactly as that reference computes it, so the two produce identical ids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace anatomy {

// The piece that stands for one byte in byte fallback: "<0x0A>" for 10.
std::string byte_piece(int byte);

// SentencePiece's space marker, U+2581 LOWER ONE EIGHTH BLOCK ("▁"), in UTF-8.
inline const std::string space_marker = "\xE2\x96\x81";

class LlamaTokenizer {
public:
    // Throws InputError naming what is missing or malformed.
    static LlamaTokenizer from_json(const nlohmann::json& tokenizer_json);
    // A llama2.c tokenizer.bin: int32 max_token_length, then for each of the model's
    // `vocab_size` ids a float32 score, an int32 length and the piece's bytes (spaces
    // as ' ', ids 0, 1, 2 = unk, BOS, EOS, 3 .. 258 = <0x00> .. <0xFF>), and nothing
    // after them (a file with more pieces is another model's tokenizer). llama2.c
    // encodes by repeatedly merging the adjacent pair whose merged piece scores
    // highest (the leftmost of equals); here every pair of pieces that forms a piece
    // becomes a merge ranked by that score, so encode() above does exactly that.
    // vocab_size 0 reads every piece the file holds (a tokenizer read without its model).
    // Throws InputError, prefixed with `source`, for a file shorter or longer than the
    // model's vocabulary, a piece that is not UTF-8, or a score that is not finite.
    static LlamaTokenizer from_llama2c(const std::uint8_t* bytes, std::size_t size, int vocab_size,
                                       const std::string& source);

    // Token ids for `text`; BOS first when `add_bos`. An empty text gives no ids at all.
    // Throws InputError for text that is not UTF-8 (utf8.hpp), a character the
    // vocabulary cannot spell (no byte pieces, no <unk>), or add_bos without a <s>.
    std::vector<std::int32_t> encode(std::string_view text, bool add_bos = true) const;
    // Text for `ids`: byte tokens reassembled into UTF-8 (a byte sequence cut short
    // becomes U+FFFD, as Hugging Face decodes), "▁" back to spaces, special tokens
    // (BOS, EOS, UNK) skipped. When `starts_text`, the leading space encode put before
    // the text is dropped; a continuation (ids that follow others) keeps its first
    // space, as llama2.c prints "because he" after "because".
    std::string decode(const std::vector<std::int32_t>& ids, bool starts_text = true) const;
    // The vocabulary entry of one id, e.g. "▁the" or "<0x0A>".
    const std::string& piece(std::int32_t id) const;
    // One id as text: "▁the" -> " the", "<0x0A>" -> a newline, "<0x41>" -> "A"; a byte that
    // is not printable ASCII, a newline or a tab stays "<0xNN>" (a piece of a UTF-8
    // character, say). A newline stays a newline: where it is shown, the page marks it.
    std::string display(std::int32_t id) const;

    std::size_t vocab_size() const { return pieces_.size(); }
    std::int32_t bos_id() const { return bos_id_; }
    std::int32_t eos_id() const { return eos_id_; }
    std::int32_t unk_id() const { return unk_id_; }

private:
    std::vector<std::string> pieces_;                        // id -> piece
    std::unordered_map<std::string, std::int32_t> ids_;      // piece -> id
    std::unordered_map<std::uint64_t, std::int32_t> ranks_;  // (left id, right id) -> merge rank, 1-based
    std::int32_t byte_ids_[256] = {};                        // byte -> <0xNN> id, -1 if absent
    std::int32_t bos_id_ = -1, eos_id_ = -1, unk_id_ = -1;   // -1: the vocabulary has none
    bool marks_spaces_ = true;                               // " " + text, spaces as "▁"; false: text as it is
};

}  // namespace anatomy
