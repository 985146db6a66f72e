#include "json_input.hpp"

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

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& source) {
    try {
        return nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e400
        throw InputError(source + " is not valid JSON: " + parser_words(e.what()));
    }
}

std::string json_kind(const nlohmann::json& value) {
    std::string shown = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    if (value.is_string()) return "a string (" + shown + ")";
    if (value.is_number()) return "a number (" + shown + ")";
    if (value.is_boolean()) return shown;
    if (value.is_null()) return "null";
    if (value.is_array()) return "a list";
    return "an object";
}

}  // namespace anatomy
