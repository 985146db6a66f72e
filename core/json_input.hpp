// JSON that comes from a user (a config.json, a --config patch, an exercise's
// outputs, a tokenizer.json): parsed here, and only here, so that every way a text
// can fail to be JSON (a syntax error, bytes that are not UTF-8, a number past
// double's range such as 1e400) is an InputError naming the source and the place.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace anatomy {

// How deeply lists and objects may nest: far more than any config, tokenizer or
// tensor (a rank-4 tensor in an exercise's output object nests 6 deep).
inline constexpr std::size_t max_json_depth = 100;

// Throws InputError: "SOURCE is not valid JSON: parse error at line 1, column 7: ..."
// (the parser's words, with bytes that are not printable ASCII written as \xNN), or
// "SOURCE nests lists and objects N deep; at most 100 are read".
nlohmann::json parse_json(std::string_view text, const std::string& source);

// `value` as JSON text (indent as nlohmann's dump), with any string's bytes that are
// not UTF-8 (a path the file system gave, say) replaced by U+FFFD: writing never throws.
std::string json_text(const nlohmann::json& value, int indent = -1);

// json_text cut to at most `limit` characters ("..." at the end when cut), for a message.
std::string json_excerpt(const nlohmann::json& value, std::size_t limit = 60);

// What a JSON value is, for a message: "a string (\"64\")", "a number (1.5)", "an array".
std::string json_kind(const nlohmann::json& value);

}  // namespace anatomy
