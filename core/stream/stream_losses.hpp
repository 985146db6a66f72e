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

struct StreamRun {
    // losses[t] = -ln p(tokens[t + 1] | what the model holds after tokens[t]), in nats.  [N - 1]
    std::vector<double> losses;
    // Then `generate` more tokens, each the most likely one (the lowest id among equals),
    // fed back the same way.  [generate]
    std::vector<std::int32_t> continuation;
};

// tokens: [N], N >= 2 (BOS first, as the model was trained), decoded one token at a time
// through one cache under `spec` (keep_all: a cache that only grows), in Real (float, or
// double for an exact comparison). Throws InputError for fewer than 2 tokens, an id
// outside the vocabulary or an invalid spec.
template <typename Real>
StreamRun stream_through_cache(const Model<Real>& model, const std::vector<std::int32_t>& tokens, const EvictionSpec& spec,
                               std::size_t generate = 0);

// The reference: each prediction from a fresh pass over the last W tokens (those of the
// text, then the generated ones): recomputed_losses over every prediction, then
// recomputed_continuation.
template <typename Real>
StreamRun stream_recomputed(const Model<Real>& model, const std::vector<std::int32_t>& tokens, std::size_t window,
                            std::size_t generate = 0);

// Part of the reference: the losses of predictions from .. to-1 (losses[t - from] predicts
// tokens[t + 1]; 0 <= from <= to <= N-1). Each prediction is a pass of its own, so parts
// computed apart (the page's workers share them out) join, in order, into exactly
// stream_recomputed's losses. Throws InputError for a range outside the text.
template <typename Real>
std::vector<double> recomputed_losses(const Model<Real>& model, const std::vector<std::int32_t>& tokens, std::size_t window,
                                      std::size_t from, std::size_t to);

// The rest of the reference: `generate` greedy tokens after the text, each from a pass
// over the last W tokens read.  [generate]
template <typename Real>
std::vector<std::int32_t> recomputed_continuation(const Model<Real>& model, const std::vector<std::int32_t>& tokens,
                                                  std::size_t window, std::size_t generate);

}  // namespace anatomy
