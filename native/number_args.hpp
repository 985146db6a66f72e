#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anatomy::native {

// Parses a plain base-10 integer for a command-line flag, in [min, max]. No sign
// unless negative values are allowed, no octal or hex, no trailing text: "010" is ten.
// Throws InputError naming the flag and the text.
std::uint64_t parse_decimal(const std::string& text, const std::string& flag, std::uint64_t min, std::uint64_t max);

// A plain decimal number ("3e-3", "0.2") for a flag, finite and in [min, max].
// Throws InputError naming the flag and the text.
double parse_real(const std::string& text, const std::string& flag, double min, double max);

// "128,512,2048": comma-separated sizes, each parsed as above in [1, 2^20]; at least one.
std::vector<std::size_t> parse_size_list(const std::string& text, const std::string& flag);

// "a,b,c" -> {"a", "b", "c"} (empty parts kept, so the caller can name them).
std::vector<std::string> split_commas(const std::string& text);

}  // namespace anatomy::native
