// The decoder's forward pass over a pretrained checkpoint's weights in place,
// through the one decoder block (core/model/decoder_layer.hpp) that the tiny model runs
// too: only the projections differ (project() reads [out, in] rows where they lie)
// and the cache (rows stored in float32 or bfloat16).
// tests/unit/test_pretrained.cpp checks it against forward() on the same weights.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../checkpoint/safetensors.hpp"
#include "../verify/backend.hpp"
#include "pretrained_model.hpp"

namespace anatomy {

// The KV cache in the precision it reports: every key (after RoPE) and value is
// stored as float32, or rounded to bfloat16 when stored and widened when read, so
// stored_bytes() is what a cache of that dtype holds.
struct PretrainedCache {
    DType dtype = DType::f32;                       // f32 or bf16
    std::size_t batch = 0, n_kv_heads = 0, head_dim = 0;
    std::vector<std::vector<std::uint8_t>> keys;    // per layer: [S, B, Hkv, dh] in dtype
    std::vector<std::vector<std::uint8_t>> values;  // per layer: [S, B, Hkv, dh] in dtype
    std::int64_t position = 0;                      // S, tokens cached per sequence

    // Bytes of keys and values across all layers: 2 * L * B * Hkv * S * dh * dtype_size.
    std::size_t stored_bytes() const;
    std::size_t stored_scalars() const { return stored_bytes() / dtype_size(dtype); }
};

// An empty cache for `batch` sequences, in `dtype` (f32 or bf16; InputError otherwise).
PretrainedCache empty_pretrained_cache(const ModelConfig& config, std::size_t batch, DType dtype);

// Forgets every position from `tokens` on, keeping the first `tokens` (0 to
// cache.position): the rows are stored [S, B, Hkv, dh], so each layer is cut short.
// Throws InputError for a count outside that range.
void rewind_pretrained_cache(PretrainedCache& cache, std::int64_t tokens);

// Run T new tokens per sequence, appending their keys and values to `cache`.
//   tokens: [B, T]  ->  logits: [B, T, V]
// Throws InputError (leaving the cache untouched) for an id outside the vocabulary.
// With `capture`: every layer's probabilities [B, Hq, T, S] (the layers' other
// intermediates are not kept: at 22 layers they would outweigh the cache), and the
// shapes of the embedding rows, of layer 0's intermediates and of the logits.
Tensor3<float> pretrained_forward(const PretrainedModel& model, PretrainedCache& cache, const TokenIds& tokens,
                                  PassCapture* capture = nullptr);

}  // namespace anatomy
