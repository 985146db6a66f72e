// The decoder's forward pass on the GPU: the twin of core/model/forward.cpp, step by
// step, with the weights and a KV cache in GPU memory. fp32 throughout; the
// projections are cuBLAS SGEMMs (full fp32, no TF32). Host code: converts the
// core's xtensor arrays to flat buffers at the boundary and back.
#pragma once

#include <vector>

#include "cuda/device_buffer.hpp"
#include "cuda/gpu_runtime.hpp"
#include "model/forward.hpp"
#include "pretrained/pretrained_model.hpp"

namespace anatomy::gpu {

// Which attention kernel the layers run.
//   eager         materialises [B, Hq, T, S] (and can return the probabilities)
//   flash         flash_plain fp32 (head dims 8, 64, 128)
//   decode_split  split-K decode, version 1; T must be 1 (one new token per sequence)
//   decode_group  decode version 2, a block per KV-head group; T must be 1, and
//                 decode_group_supports(head dim, Hq / Hkv)
enum class GpuAttention { eager, flash, decode_split, decode_group };
// The decode kernel for T = 1: decode_group where it is compiled, else decode_split.
GpuAttention decode_kernel_for(const ModelConfig& config);
const char* to_string(GpuAttention kernel);

// How the projection matrices are laid out in GPU memory.
//   in_out  the core's [in, out] (LayerWeights), lm_head [D, V]
//   out_in  a Hugging Face checkpoint's [out, in], lm_head [V, D]
enum class WeightLayout { in_out, out_in };

struct GpuLayerWeights {
    DeviceBuffer<float> attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;  // [D] or a matrix in `layout`
};

struct GpuModel {
    ModelConfig config;
    WeightLayout layout = WeightLayout::in_out;
    DeviceBuffer<float> embedding;  // [V, D]
    std::vector<GpuLayerWeights> layers;
    DeviceBuffer<float> final_norm;  // [D]
    DeviceBuffer<float> lm_head;     // when untied: [D, V] (in_out) or [V, D] (out_in)
};

GpuModel upload_model(const Model<float>& model);
// A checkpoint's weights as float32 in its own [out, in] layout (bfloat16 and
// float16 widen exactly, so a --dtype bfloat16 model keeps its rounded values).
GpuModel upload_model(const PretrainedModel& model);

// Per layer: keys (after RoPE) and values, [B, Hkv, capacity, dh]; rows
// 0 .. position - 1 of each head are filled.
struct GpuKVCache {
    std::vector<DeviceBuffer<float>> keys, values;
    int batch = 0, capacity = 0;
    long long position = 0;
};

GpuKVCache make_gpu_cache(const ModelConfig& config, int batch, int capacity);

// T new tokens per sequence through the model, appending to `cache`.
//   tokens: [B, T]  ->  logits: [B, T, V]
// With `probs` (eager only) it receives each layer's probabilities [B, Hq, T, S].
// Throws InputError for bad ids or a full cache, CudaError for a failing call.
Tensor3<float> gpu_forward(const GpuRuntime& gpu, const GpuModel& model, GpuKVCache& cache, const TokenIds& tokens,
                           GpuAttention kernel, std::vector<Tensor4<float>>* probs = nullptr);

}  // namespace anatomy::gpu
