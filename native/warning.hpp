// A warning for the user: one line on standard error, "attn: warning: ...". The
// command goes on; errors, which stop it, are InputError (main.cpp prints those).
#pragma once

#include <iostream>
#include <string>

namespace anatomy::native {

inline void warn(const std::string& message) { std::cerr << "attn: warning: " << message << "\n"; }

}  // namespace anatomy::native
