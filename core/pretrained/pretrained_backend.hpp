// A checkpoint used in place (pretrained_forward) as a Backend (verify/backend.hpp):
// what the probe runs on the CPU, and what the check suite can run on.
#pragma once

#include "../verify/backend.hpp"
#include "pretrained_forward.hpp"

namespace anatomy {

class PretrainedBackend final : public Backend {
public:
    // `model` must outlive the backend; the KV cache is kept in `cache_dtype` (f32 or bf16).
    PretrainedBackend(const PretrainedModel& model, DType cache_dtype)
        : model_(model), cache_(empty_pretrained_cache(model.config, 1, cache_dtype)) {}
    const ModelConfig& config() const override { return model_.config; }
    void reset(std::size_t batch) override { cache_ = empty_pretrained_cache(model_.config, batch, cache_.dtype); }
    Tensor3<float> forward(const TokenIds& tokens, PassCapture* capture) override {
        return pretrained_forward(model_, cache_, tokens, capture);
    }
    // Keeps the cache's first `tokens` positions (the page's typed text: a changed tail is rerun).
    void rewind(std::int64_t tokens) { rewind_pretrained_cache(cache_, tokens); }
    DType cache_dtype() const override { return cache_.dtype; }
    std::int64_t cached_tokens() const override { return cache_.position; }
    std::size_t cache_bytes() const override { return cache_.stored_bytes(); }

private:
    const PretrainedModel& model_;
    PretrainedCache cache_;
};

}  // namespace anatomy
