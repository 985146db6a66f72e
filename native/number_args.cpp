#include "number_args.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "tensor.hpp"

namespace anatomy::native {

std::uint64_t parse_decimal(const std::string& text, const std::string& flag, std::uint64_t min, std::uint64_t max) {
    const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
    if (text.empty() || error == std::errc::invalid_argument || end != text.data() + text.size())
        throw InputError(flag + " '" + text + "' is not a whole number in " + range);
    if (error == std::errc::result_out_of_range || value < min || value > max)
        throw InputError(flag + " '" + text + "' is outside " + range);
    return value;
}

double parse_real(const std::string& text, const std::string& flag, double min, double max) {
    std::ostringstream range;
    range << "[" << min << ", " << max << "]";
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        throw InputError(flag + " '" + text + "' is not a number in " + range.str());
    if (value < min || value > max) throw InputError(flag + " '" + text + "' is outside " + range.str());
    return value;
}

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
    return parts;
}

std::vector<std::size_t> parse_size_list(const std::string& text, const std::string& flag) {
    std::vector<std::size_t> sizes;
    for (const std::string& part : split_commas(text)) sizes.push_back(parse_decimal(part, flag, 1, 1 << 20));
    if (sizes.empty()) throw InputError(flag + " needs at least one size");
    return sizes;
}

}  // namespace anatomy::native
