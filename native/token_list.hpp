#pragma once

#include <string>
#include <vector>

#include "tensor.hpp"

namespace anatomy::native {

// Parses "1,2,3" into ids, each checked against [0, vocab_size). Throws InputError
// with a message naming the offending entry (empty list, not a number, negative, too large).
std::vector<std::int32_t> parse_token_list(const std::string& text, int vocab_size);

// A batch of `batch` sequences: row 0 is `ids`; row b > 0 is the deterministic
// variant (ids[t] + 7b + tb) mod V, which differs from row 0 (batch <= 16, V = 32).
TokenIds make_batch(const std::vector<std::int32_t>& ids, int batch, int vocab_size);

}  // namespace anatomy::native
