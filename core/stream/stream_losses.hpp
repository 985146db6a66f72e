// A long text decoded one token at a time through a cache of at most W entries
// (model/kv_eviction.hpp), and the loss of each next-token prediction: what each
// eviction policy costs a model, against recomputing every prediction from the last
// W tokens (the reference: nothing cached, nothing evicted, positions 0 .. W-1).
#pragma once

#include <cstdint>
#include <vector>

#include "../model/kv_eviction.hpp"
#include "../model/weights.hpp"

namespace anatomy {

// tokens: [N], N >= 2 (BOS first, as the model was trained)  ->  [N - 1]: loss[t] is
// -ln p(tokens[t + 1] | what the cache holds after tokens[t]), in nats, decoding one
// token at a time under `spec` (keep_all: one growing cache), in Real (float, or double
// for an exact comparison). Throws InputError for
// fewer than 2 tokens, an id outside the vocabulary or an invalid spec.
template <typename Real>
std::vector<double> streamed_losses(const Model<Real>& model, const std::vector<std::int32_t>& tokens, const EvictionSpec& spec);

// The reference: loss[t] from a fresh pass over tokens max(0, t - W + 1) .. t.
template <typename Real>
std::vector<double> recomputed_losses(const Model<Real>& model, const std::vector<std::int32_t>& tokens, std::size_t window);

// Greedy continuation: after reading `tokens` one at a time under `spec`, the next
// `count` tokens, each the most likely one (the lowest id among equals), fed back
// through the same cache.   tokens: [N], N >= 1  ->  [count]
template <typename Real>
std::vector<std::int32_t> streamed_continuation(const Model<Real>& model, const std::vector<std::int32_t>& tokens,
                                                const EvictionSpec& spec, std::size_t count);

// The same from the reference: each next token from a fresh pass over the last W tokens.
template <typename Real>
std::vector<std::int32_t> recomputed_continuation(const Model<Real>& model, const std::vector<std::int32_t>& tokens,
                                                  std::size_t window, std::size_t count);

}  // namespace anatomy
