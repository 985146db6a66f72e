// The decoder's forward pass. Full prefill, chunked prefill and single-token
// decode are the same call: feed T >= 1 new tokens per sequence; the cache
// supplies the history and its position counter supplies their positions.
#pragma once

#include <vector>

#include "decoder_layer.hpp"
#include "kv_cache.hpp"
#include "weights.hpp"

namespace anatomy {

template <typename Real>
struct ForwardCapture {
    std::vector<std::int64_t> positions;  // [T] absolute positions of the new tokens
    std::vector<LayerCapture<Real>> layers;
    Tensor3<Real> final_normed;           // [B, T, D]
};

// Run T new tokens per sequence through the model, appending their keys and
// values to `cache` and advancing its position by T.
//   tokens: [B, T]  ->  logits: [B, T, V]
// Throws InputError (leaving the cache untouched) for an id outside the
// vocabulary, an empty token list or a batch size that differs from the cache's.
// When `capture` is given it receives every intermediate of the pass. `external`, when
// given, computes every layer's attention (decoder_layer.hpp).
template <typename Real>
Tensor3<Real> forward(const Model<Real>& model, KVCache<Real>& cache, const TokenIds& tokens,
                      AttentionPath path = AttentionPath::grouped, ForwardCapture<Real>* capture = nullptr,
                      const ExternalAttention<Real>* external = nullptr);

// One pass over a whole sequence from an empty cache.   tokens: [B, T]  ->  [B, T, V]
template <typename Real>
Tensor3<Real> full_forward(const Model<Real>& model, const TokenIds& tokens,
                           AttentionPath path = AttentionPath::grouped, ForwardCapture<Real>* capture = nullptr);

// The last position's logits of one pass over `tokens` from an empty cache: what a
// prediction from a fresh window needs (core/stream's reference makes one per token).
// The same numbers as full_forward's last row, with less work: the earlier positions go
// through every layer but the last, which needs only their keys and values; then the
// last token goes through every layer as a decode step against that cache.
//   tokens: [B, T]  ->  [B, 1, V]
template <typename Real>
Tensor3<Real> last_position_logits(const Model<Real>& model, const TokenIds& tokens);

}  // namespace anatomy
