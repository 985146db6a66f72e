#include "number_args.hpp"

#include <charconv>

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

}  // namespace anatomy::native
