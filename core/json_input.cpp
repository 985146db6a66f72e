#include "json_input.hpp"

#include <algorithm>
#include <cstdio>

#include "tensor.hpp"

namespace anatomy {
namespace {

// The parser's message without its "[json.exception.parse_error.101] " prefix, and
// with every byte that is not printable ASCII as \xNN (the message quotes the input).
std::string parser_words(const std::string& what) {
    const std::size_t end = what.find("] ");
    const std::string words = what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2) : what;
    std::string out;
    for (const char c : words) {
        const unsigned char byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7F) {
            out += c;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", unsigned(byte));
            out += hex;
        }
    }
    return out;
}

// How deep lists and objects nest in `text` (brackets inside strings not counted).
std::size_t nesting_depth(std::string_view text) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;  // the escaped character
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& source) {
    // What reads JSON here walks it recursively (writing it out, reading an array's
    // shape): a value nested a million deep would overflow the stack.
    if (const std::size_t depth = nesting_depth(text); depth > max_json_depth)
        throw InputError(source + " nests lists and objects " + std::to_string(depth) + " deep; at most " +
                         std::to_string(max_json_depth) + " are read");
    try {
        return nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e400
        throw InputError(source + " is not valid JSON: " + parser_words(e.what()));
    }
}

std::string json_text(const nlohmann::json& value, int indent) {
    return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_excerpt(const nlohmann::json& value, std::size_t limit) {
    std::string shown = json_text(value);
    if (shown.size() > limit) {
        shown.resize(limit > 3 ? limit - 3 : 0);
        while (!shown.empty() && (static_cast<unsigned char>(shown.back()) & 0xC0) == 0x80) shown.pop_back();  // a whole character
        if (!shown.empty() && static_cast<unsigned char>(shown.back()) >= 0xC0) shown.pop_back();
        shown += "...";
    }
    return shown;
}

std::string json_kind(const nlohmann::json& value) {
    const std::string shown = json_excerpt(value, 40);
    if (value.is_string()) return "a string (" + shown + ")";
    if (value.is_number()) return "a number (" + shown + ")";
    if (value.is_boolean()) return shown;
    if (value.is_null()) return "null";
    if (value.is_array()) return "a list";
    return "an object";
}

}  // namespace anatomy
