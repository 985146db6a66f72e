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

// A size in bytes as a reader says it: "812 B", "140.3 kB", "2.1 MB", "30.6 GB", "2.65 TB"
// (a double, so that a size past any machine's, which a message may need to name, fits).
inline std::string byte_size_text(double bytes) {
    if (bytes < 1e3) return number_text("%.0f B", bytes);
    if (bytes < 1e6) return number_text("%.1f kB", bytes / 1e3);
    if (bytes < 1e9) return number_text("%.1f MB", bytes / 1e6);
    if (bytes < 1e12) return number_text("%.1f GB", bytes / 1e9);
    return number_text("%.3g TB", bytes / 1e12);
}

}  // namespace anatomy::native
