#pragma once

#include <string>
#include <vector>

#include "tensor.hpp"

namespace anatomy::native {

// Parses "1,2,3" into ids, each checked against [0, vocab_size). Throws InputError
// with a message naming the offending entry (empty list, not a number, negative, too large).
std::vector<std::int32_t> parse_token_list(const std::string& text, int vocab_size);

}  // namespace anatomy::native
