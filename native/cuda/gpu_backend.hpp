// The GPU forward (gpu_forward.hpp) as a Backend (core/verify/backend.hpp), so the
// core's check suite and the probe run on it unchanged. A pass with a capture runs
// eager attention (it keeps every layer's probabilities); a one-token step runs the
// decode kernel (decode_group where compiled, else decode_split); other passes eager.
#pragma once

#include "cuda/gpu_forward.hpp"
#include "verify/backend.hpp"

namespace anatomy::gpu {

class GpuBackend final : public Backend {
public:
    // `capacity` tokens per sequence: the longest pass the backend will be asked for.
    // `runtime` and `model` (already uploaded) must outlive the backend.
    GpuBackend(const GpuRuntime& runtime, const GpuModel& model, int capacity);
    const ModelConfig& config() const override { return model_.config; }
    void reset(std::size_t batch) override;
    Tensor3<float> forward(const TokenIds& tokens, PassCapture* capture) override;
    DType cache_dtype() const override { return DType::f32; }
    std::int64_t cached_tokens() const override { return cache_.position; }
    // The filled rows of the cache's buffers (each holds `capacity` rows per head).
    std::size_t cache_bytes() const override;

private:
    const GpuRuntime& gpu_;
    const GpuModel& model_;
    int capacity_;
    GpuKVCache cache_;
};

}  // namespace anatomy::gpu
