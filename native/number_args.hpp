#pragma once

#include <cstdint>
#include <string>

namespace anatomy::native {

// Parses a plain base-10 integer for a command-line flag, in [min, max]. No sign
// unless negative values are allowed, no octal or hex, no trailing text: "010" is ten.
// Throws InputError naming the flag and the text.
std::uint64_t parse_decimal(const std::string& text, const std::string& flag, std::uint64_t min, std::uint64_t max);

}  // namespace anatomy::native
