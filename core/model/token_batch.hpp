// The batch every front end builds from one list of token ids, so that
// `attn verify --tokens ... --batch B` and the page run the same sequences.
#pragma once

#include <cstdint>
#include <vector>

#include "../tensor.hpp"

namespace anatomy {

// The largest batch we build (the CLI's --batch range); keeps a trace small enough to read.
inline constexpr int max_batch = 16;

// A batch of `batch` sequences: row 0 is `ids`; row b > 0 is the deterministic
// variant (ids[t] + 7b + tb) mod V. Rows b and b' differ at position 0 whenever
// 7(b - b') is not a multiple of V (always for the tiny model's V = 32).
//   ids: [T]  ->  [B, T]
// Throws InputError naming the first bad entry: an empty list, an id outside
// [0, vocab_size), or a batch outside [1, max_batch].
TokenIds make_batch(const std::vector<std::int32_t>& ids, int batch, int vocab_size);

}  // namespace anatomy
