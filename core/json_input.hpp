// JSON that comes from a user (a config.json, a --config patch, an exercise's
// outputs, a tokenizer.json): parsed here, and only here, so that every way a text
// can fail to be JSON (a syntax error, bytes that are not UTF-8, a number past
// double's range such as 1e400) is an InputError naming the source and the place.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace anatomy {

// Throws InputError: "SOURCE is not valid JSON: parse error at line 1, column 7: ..."
// (the parser's words, with bytes that are not printable ASCII written as \xNN).
nlohmann::json parse_json(std::string_view text, const std::string& source);

// What a JSON value is, for a message: "a string (\"64\")", "a number (1.5)", "an array".
std::string json_kind(const nlohmann::json& value);

}  // namespace anatomy
