// A deterministic, made-up Llama-style tokenizer.json for checkpoints written by
// `attn export-checkpoint`, so the probe can run end to end without a download.
// It has the structure of TinyLlama's (SentencePiece BPE, "▁" for spaces, byte
// fallback) but its merges are systematic rather than learned from text.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace anatomy {

// A Hugging Face tokenizer.json with exactly `vocab_size` pieces (at least 4), in id order:
//   <unk> 0, <s> 1, </s> 2;
//   the 256 byte tokens <0x00> .. <0xFF> (only when vocab_size >= 354, so that "▁"
//     and every printable ASCII character fit after them, as in Llama's layout);
//   "▁", then single characters: lowercase letters by English frequency, uppercase,
//     digits, punctuation (printable ASCII, fewer when the vocabulary is small);
//   merged pieces, each created by the merge listed at its rank: "▁" + letter and
//     letter + letter first, then those two-letter pieces + a letter, and so on by
//     length, until the vocabulary is full.
// Every merge's two halves exist before it, so LlamaTokenizer (and Hugging Face
// tokenizers) load it, and any text encodes (byte fallback, or <unk> for a
// character without a piece when the byte tokens do not fit).
nlohmann::json synthetic_tokenizer_json(int vocab_size);

// The same vocabulary as a llama2.c tokenizer.bin (for llama2.c-format exports):
// pieces in id order with "▁" written as ' ', each merged piece scored -(its merge's
// rank) so that earlier merges win, the others 0; max_token_length their longest.
std::vector<std::uint8_t> synthetic_tokenizer_bin(int vocab_size);

}  // namespace anatomy
