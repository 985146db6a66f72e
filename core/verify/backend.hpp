// One implementation of the decoder, as the check suite (check_suite.hpp) and the
// probe see it: a model with a KV cache that takes T new tokens per sequence at a
// time. The tiny model (below), a checkpoint used in place (pretrained/
// pretrained_backend.hpp) and, natively, the GPU forward (native/cuda/gpu_backend.hpp)
// implement it, so every check runs on each of them without a copy of its code, as
// ggml's test-backend-ops runs every op on every backend.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../checkpoint/safetensors.hpp"
#include "../model/forward.hpp"

namespace anatomy {

// What one pass may record besides its logits.
struct PassCapture {
    // Per layer. probs ([B, Hq, T, S]) always; the other fields where the backend
    // keeps them (the tiny model: all; a checkpoint or the GPU: probs only).
    std::vector<LayerCapture<float>> layers;
    // The shape of every tensor the pass computed for layer 0, and of its input
    // and output, in the order computed, e.g. {"q_heads", [B, Hq, T, dh]}.
    std::vector<std::pair<std::string, std::vector<std::size_t>>> shapes;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual const ModelConfig& config() const = 0;
    // Empties the KV cache and sizes it for `batch` sequences.
    virtual void reset(std::size_t batch) = 0;
    // T new tokens per sequence through the model, appended to the cache:
    //   tokens: [B, T]  ->  logits: [B, T, V]
    virtual Tensor3<float> forward(const TokenIds& tokens, PassCapture* capture) = 0;
    virtual DType cache_dtype() const = 0;
    virtual std::int64_t cached_tokens() const = 0;
    virtual std::size_t cache_bytes() const = 0;  // keys and values of every layer, as stored
};

// The tiny model (core/model/forward.cpp) in float32, attention by `path`.
class TinyBackend final : public Backend {
public:
    explicit TinyBackend(const Model<float>& model, AttentionPath path = AttentionPath::grouped)
        : model_(model), path_(path) {}
    const ModelConfig& config() const override { return model_.config; }
    void reset(std::size_t batch) override { cache_ = empty_cache<float>(model_.config, batch); }
    Tensor3<float> forward(const TokenIds& tokens, PassCapture* capture) override;
    DType cache_dtype() const override { return DType::f32; }
    std::int64_t cached_tokens() const override { return cache_.position; }
    std::size_t cache_bytes() const override { return cache_.stored_scalars() * sizeof(float); }

private:
    const Model<float>& model_;
    AttentionPath path_;
    KVCache<float> cache_;
};

}  // namespace anatomy
