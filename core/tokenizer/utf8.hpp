// UTF-8, checked as the Unicode standard defines it: no stray continuation bytes, no
// overlong forms, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF. Text enters
// the tokenizers through these checks, and what they give back (a decoded
// continuation, a piece) is valid UTF-8 that any JSON writer accepts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace anatomy {

// The length (1 to 4) of the UTF-8 sequence that starts at text[at], or 0 when no
// valid one does (including a sequence cut short by the end of the text).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

// The byte offset where `text` stops being valid UTF-8; nothing when all of it is.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

// "byte 0xFF at offset 3": the first invalid byte of `text`, for a message
// (text must hold one: first_invalid_utf8(text) has a value).
std::string invalid_utf8_text(std::string_view text);

// `bytes` with each byte that starts no valid sequence replaced by U+FFFD (the
// replacement character), as Python's bytes.decode(errors="replace") and Hugging
// Face's decode do: a continuation cut off mid-character still reads as text.
std::string utf8_with_replacements(std::string_view bytes);

}  // namespace anatomy
