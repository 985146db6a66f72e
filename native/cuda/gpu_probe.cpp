// The probe's passes on the GPU (see gpu_probe.hpp).
#include "cuda/gpu_probe.hpp"

#include <algorithm>

#include "cache_payload.hpp"
#include "cuda/attention_kernels.hpp"
#include "cuda/gpu_forward.hpp"
#include "cuda/gpu_runtime.hpp"
#include "cuda/gpu_verify.hpp"

namespace anatomy::native {
namespace {

using gpu::GpuAttention;

class GpuProbePasses final : public ProbePasses {
public:
    // A cache for `capacity` tokens: the prompt plus the continuation.
    GpuProbePasses(const gpu::GpuRuntime& runtime, const PretrainedModel& model, int capacity)
        : gpu_(runtime), model_(gpu::upload_model(model)), cache_(gpu::make_gpu_cache(model.config, 1, capacity)) {}

    void reset() override { cache_.position = 0; }  // rows past the position are never read

    Tensor3<float> forward(const TokenIds& tokens, PretrainedCapture* capture) override {
        const int T = int(tokens.shape(1)), S = int(cache_.position) + T;
        if (capture) {
            *capture = {};
            capture->shapes = block_shapes(T, S);
            return gpu::gpu_forward(gpu_, model_, cache_, tokens, GpuAttention::eager, &capture->probabilities);
        }
        const GpuAttention decode = gpu::decode_kernel_for(model_.config);
        const bool one_token = T == 1 && (decode == GpuAttention::decode_group ||
                                          gpu::decode_split_supports(model_.config.head_dim));
        return gpu::gpu_forward(gpu_, model_, cache_, tokens, one_token ? decode : GpuAttention::eager);
    }

    DType cache_dtype() const override { return DType::f32; }
    std::int64_t cached_tokens() const override { return cache_.position; }
    std::size_t cache_bytes() const override {  // the filled rows; the buffers hold `capacity`
        return std::size_t(anatomy::cache_bytes(model_.config, int(sizeof(float)), cache_.position, 1));
    }

private:
    // The shapes of layer 0's GPU buffers as the kernels read them, in the order
    // gpu_forward computes them. k_heads and v_heads are the T new rows of each
    // KV head as the projections are written into the cache (no separate copy).
    std::vector<std::pair<std::string, std::vector<std::size_t>>> block_shapes(int T, int S) const {
        const ModelConfig& c = model_.config;
        const std::size_t t = std::size_t(T), s = std::size_t(S), D = std::size_t(c.hidden_size);
        const std::size_t Hq = std::size_t(c.n_heads), Hkv = std::size_t(c.n_kv_heads), dh = std::size_t(c.head_dim);
        const std::size_t F = std::size_t(c.ffn_size), V = std::size_t(c.vocab_size);
        return {{"embedding_rows", {1, t, D}},    {"attn_norm", {1, t, D}},         {"q_proj", {1, t, Hq * dh}},
                {"k_proj", {1, t, Hkv * dh}},     {"v_proj", {1, t, Hkv * dh}},     {"q_heads", {1, Hq, t, dh}},
                {"k_heads", {1, Hkv, t, dh}},     {"v_heads", {1, Hkv, t, dh}},
                {"k_cache_layer", {1, Hkv, s, dh}}, {"v_cache_layer", {1, Hkv, s, dh}}, {"scores", {1, Hq, t, s}},
                {"probabilities", {1, Hq, t, s}}, {"head_outputs", {1, Hq, t, dh}}, {"merged_heads", {1, t, Hq * dh}},
                {"o_proj", {1, t, D}},            {"gate_proj", {1, t, F}},         {"up_proj", {1, t, F}},
                {"down_proj", {1, t, D}},         {"block_output", {1, t, D}},      {"logits", {1, t, V}}};
    }

    const gpu::GpuRuntime& gpu_;
    gpu::GpuModel model_;
    gpu::GpuKVCache cache_;
};

}  // namespace

nlohmann::json run_probe_on_gpu(int device, const PretrainedModel& model, const LlamaTokenizer& tokenizer,
                                const ProbeRequest& request) {
    require_gpu_device(device);
    const gpu::GpuRuntime runtime(device);
    const int capacity = int(request.ids.size()) + std::max(request.generate, 0);
    GpuProbePasses passes(runtime, model, capacity);
    nlohmann::json trace = run_probe(model, tokenizer, request, passes);
    nlohmann::json& probe = trace["probe"];
    probe["device"] = gpu::gpu_info_to_json(runtime.info());
    probe["precision"]["activations"] = "float32";
    probe["precision"]["note"] =
        model.precision == WeightPrecision::float32
            ? "on the GPU: weights widened to float32 and uploaded in their [out, in] layout; float32 throughout "
              "(cuBLAS SGEMM without TF32, float32 KV cache)"
            : "on the GPU: weights rounded to bfloat16 once, then held as float32 (the same values); activations, "
              "accumulation, softmax and the KV cache in float32";
    return trace;
}

}  // namespace anatomy::native
