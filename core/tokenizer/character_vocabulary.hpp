// attn train's tokenizer: one token per character (Unicode code point) of the
// training text, written as a Hugging Face tokenizer.json that LlamaTokenizer
// reads back (a BPE model without merges; normalizer and pre-tokenizer null, so
// text is taken as it is):
//   id 0        "<s>", the beginning of text; every training window starts with it
//   ids 1 ..    the text's distinct characters, in code-point order
#pragma once

#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace anatomy {

// Throws InputError for text that is empty, holds a NUL byte (a binary file), or is
// not UTF-8 (naming the byte offset where it stops being UTF-8).
nlohmann::json character_tokenizer_json(std::string_view text);

// Checks the same three things on their own.
void require_utf8_text(std::string_view text);

}  // namespace anatomy
