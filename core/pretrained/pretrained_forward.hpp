// The decoder's forward pass over a pretrained checkpoint's weights in place. It
// is core/forward.cpp's decoder_layer step for step (RMSNorm, q/k/v projections,
// RoPE, cache append, grouped-query attention, o_proj, residual, SwiGLU, residual),
// built from the same operations in core/ops/; only the projections differ:
// project() reads [out, in] rows where they lie instead of a float [in, out] copy.
// tests/unit/test_pretrained.cpp checks it against forward() on the same weights.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../checkpoint/safetensors.hpp"
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

// What a pass may record besides its logits.
struct PretrainedCapture {
    std::vector<Tensor4<float>> probabilities;  // per layer: [B, Hq, T, S] attention
    // The shape of every intermediate of layer 0 and of the logits, in the order computed,
    // e.g. {"q", [B, Hq, T, dh]}: taken from the tensors themselves, not from the config.
    std::vector<std::pair<std::string, std::vector<std::size_t>>> shapes;
};

// Run T new tokens per sequence, appending their keys and values to `cache`.
//   tokens: [B, T]  ->  logits: [B, T, V]
// Throws InputError (leaving the cache untouched) for an id outside the vocabulary.
Tensor3<float> pretrained_forward(const PretrainedModel& model, PretrainedCache& cache, const TokenIds& tokens,
                                  PretrainedCapture* capture = nullptr);

}  // namespace anatomy
