// What attn says to the user on stderr: an error ("attn: ...", main.cpp) or a
// warning ("attn: warning: ...", the command goes on). Each is one line: a message
// that quotes the user's input (a path, a tensor's name from a file) has its control
// characters written as \n, \t or \xNN, so that a name holding a newline cannot
// split it.
#pragma once

#include <cstdio>
#include <iostream>
#include <string>

namespace anatomy::native {

inline std::string one_line(const std::string& message) {
    std::string line;
    for (const char c : message) {
        const unsigned char byte = static_cast<unsigned char>(c);
        if (c == '\n') line += "\\n";
        else if (c == '\r') line += "\\r";
        else if (c == '\t') line += "\\t";
        else if (byte < 0x20 || byte == 0x7F) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", unsigned(byte));
            line += hex;
        } else {
            line += c;
        }
    }
    return line;
}

inline void warn(const std::string& message) { std::cerr << "attn: warning: " << one_line(message) << "\n"; }

}  // namespace anatomy::native
