#include "cuda/gpu_backend.hpp"

#include <utility>

#include "cuda/attention_kernels.hpp"

namespace anatomy::gpu {
namespace {

// The shapes of layer 0's GPU buffers as the kernels read them, in the order
// gpu_forward computes them, with the pass's input and output. k_heads and v_heads
// are the T new rows of each KV head as the projections are written into the cache.
std::vector<std::pair<std::string, std::vector<std::size_t>>> block_shapes(const ModelConfig& c, std::size_t B,
                                                                          std::size_t t, std::size_t s) {
    const std::size_t D = std::size_t(c.hidden_size), Hq = std::size_t(c.n_heads), Hkv = std::size_t(c.n_kv_heads);
    const std::size_t dh = std::size_t(c.head_dim), F = std::size_t(c.ffn_size), V = std::size_t(c.vocab_size);
    return {{"embedding_rows", {B, t, D}},      {"attn_norm", {B, t, D}},         {"q_proj", {B, t, Hq * dh}},
            {"k_proj", {B, t, Hkv * dh}},       {"v_proj", {B, t, Hkv * dh}},     {"q_heads", {B, Hq, t, dh}},
            {"k_heads", {B, Hkv, t, dh}},       {"v_heads", {B, Hkv, t, dh}},
            {"k_cache_layer", {B, Hkv, s, dh}}, {"v_cache_layer", {B, Hkv, s, dh}}, {"scores", {B, Hq, t, s}},
            {"probabilities", {B, Hq, t, s}},   {"head_outputs", {B, Hq, t, dh}}, {"merged_heads", {B, t, Hq * dh}},
            {"o_proj", {B, t, D}},              {"gate_proj", {B, t, F}},         {"up_proj", {B, t, F}},
            {"down_proj", {B, t, D}},           {"block_output", {B, t, D}},      {"logits", {B, t, V}}};
}

}  // namespace

GpuBackend::GpuBackend(const GpuRuntime& runtime, const GpuModel& model, int capacity)
    : gpu_(runtime), model_(model), capacity_(capacity), cache_(make_gpu_cache(model.config, 1, capacity)) {}

void GpuBackend::reset(std::size_t batch) {
    if (cache_.batch == int(batch)) cache_.position = 0;  // rows past the position are never read
    else cache_ = make_gpu_cache(model_.config, int(batch), capacity_);
}

Tensor3<float> GpuBackend::forward(const TokenIds& tokens, PassCapture* capture) {
    const std::size_t B = tokens.shape(0), T = tokens.shape(1), S = std::size_t(cache_.position) + T;
    if (capture) {
        *capture = {};
        capture->shapes = block_shapes(model_.config, B, T, S);
        std::vector<Tensor4<float>> probs;
        Tensor3<float> logits = gpu_forward(gpu_, model_, cache_, tokens, GpuAttention::eager, &probs);
        for (Tensor4<float>& p : probs) capture->layers.emplace_back().probs = std::move(p);
        return logits;
    }
    const GpuAttention decode = decode_kernel_for(model_.config);
    const bool one_token = T == 1 && (decode == GpuAttention::decode_group || decode_split_supports(model_.config.head_dim));
    return gpu_forward(gpu_, model_, cache_, tokens, one_token ? decode : GpuAttention::eager);
}

std::size_t GpuBackend::cache_bytes() const {
    std::size_t rows_allocated = 0;  // floats in the buffers, keys and values of every layer
    for (std::size_t l = 0; l < cache_.keys.size(); ++l) rows_allocated += cache_.keys[l].size() + cache_.values[l].size();
    return rows_allocated / std::size_t(cache_.capacity) * std::size_t(cache_.position) * sizeof(float);
}

}  // namespace anatomy::gpu
