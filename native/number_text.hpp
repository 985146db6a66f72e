// One number written with a printf pattern ("%.2f", "%.1fx"): the cells of the tables
// and reports attn prints.
#pragma once

#include <cstdio>
#include <string>

namespace anatomy::native {

inline std::string number_text(const char* pattern, double value) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

}  // namespace anatomy::native
