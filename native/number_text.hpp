// One number written with a printf pattern ("%.2f", "%.1fx"): the cells of the tables
// and reports attn prints.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace anatomy::native {

inline std::string number_text(const char* pattern, double value) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

// A size in bytes as a reader says it: "812 B", "140.3 kB", "2.1 MB", "30.6 GB".
inline std::string byte_size_text(std::uint64_t bytes) {
    if (bytes < 1000) return std::to_string(bytes) + " B";
    if (bytes < 1000 * 1000) return number_text("%.1f kB", double(bytes) / 1e3);
    if (bytes < 1000 * 1000 * 1000) return number_text("%.1f MB", double(bytes) / 1e6);
    return number_text("%.1f GB", double(bytes) / 1e9);
}

}  // namespace anatomy::native
