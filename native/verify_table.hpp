#pragma once

#include <ostream>
#include <vector>

#include "verify/checks.hpp"

namespace anatomy::native {

// The table `attn verify` prints: one row per check with its error, tolerance and verdict.
void print_check_table(std::ostream& out, const std::vector<CheckRecord>& checks);

}  // namespace anatomy::native
