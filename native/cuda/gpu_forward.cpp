// The GPU forward pass, operation by operation in core/model/forward.cpp's order.
#include "cuda/gpu_forward.hpp"

#include <string>

#include "cuda/attention_kernels.hpp"
#include "cuda/model_kernels.hpp"

namespace anatomy::gpu {
namespace {

template <typename Array>
DeviceBuffer<float> upload(const Array& host) {
    return DeviceBuffer<float>(std::vector<float>(host.data(), host.data() + host.size()));
}

// Row-major Y[M, N] = X[M, K] @ W[K, N] (core weights are stored [in, out]).
// cuBLAS is column-major, where row-major W reads as W^T [N, K] and X as X^T [K, M]:
// computing Y^T = W^T X^T column-major writes Y row-major.
void matmul(const GpuRuntime& gpu, const float* x, const float* w, float* y, int M, int K, int N) {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(gpu.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, w, N, x, K, &zero, y, N));
}

// Row-major Y[M, N] = X[M, K] @ E[N, K]^T (the tied LM head reads the embedding [V, D]).
// Column-major, E row-major is E^T [K, N]; op T gives E [N, K], so Y^T = E X^T.
void matmul_transposed(const GpuRuntime& gpu, const float* x, const float* e, float* y, int M, int K, int N) {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(gpu.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, e, K, x, K, &zero, y, N));
}

// y = x @ W for a projection W in the model's layout:
//   x: [M, K], W: [K, N] (in_out) or [N, K] (out_in)  ->  y: [M, N]
void project(const GpuRuntime& gpu, WeightLayout layout, const float* x, const float* w, float* y, int M, int K, int N) {
    if (layout == WeightLayout::in_out) matmul(gpu, x, w, y, M, K, N);
    else matmul_transposed(gpu, x, w, y, M, K, N);
}

// A checkpoint matrix widened to float32, rows as stored: [rows, cols].
DeviceBuffer<float> upload(const WeightView& w) {
    std::vector<float> host(w.elements());
    for (std::size_t j = 0; j < w.rows; ++j) {
        const float* row = w.row(j, host.data() + j * w.cols);  // fills the buffer unless the bytes are float32 already
        if (row != host.data() + j * w.cols) std::copy(row, row + w.cols, host.data() + j * w.cols);
    }
    return DeviceBuffer<float>(host);
}

// Scratch for one forward of B x T new tokens (rows = B * T), reused by every layer.
struct Workspace {
    DeviceBuffer<float> x, h, q, k, v, q_heads, heads, merged, update, gate, up, hidden;
    DeviceBuffer<float> scores;                   // eager: [B, Hq, T, S] (probabilities in place)
    DeviceBuffer<float> partial_out, partial_ml;  // decode_split, decode_group
    DeviceBuffer<unsigned> arrivals;              // decode_group
    int splits = 1;                               // decode_split
    DecodePlan plan;                              // decode_group
};

Workspace make_workspace(const GpuRuntime& gpu, const ModelConfig& c, GpuAttention kernel, int B, int T, int S) {
    const std::size_t rows = std::size_t(B) * T, qd = std::size_t(c.n_heads) * c.head_dim;
    const std::size_t kvd = std::size_t(c.n_kv_heads) * c.head_dim;
    Workspace w{DeviceBuffer<float>(rows * c.hidden_size), DeviceBuffer<float>(rows * c.hidden_size),
                DeviceBuffer<float>(rows * qd),            DeviceBuffer<float>(rows * kvd),
                DeviceBuffer<float>(rows * kvd),           DeviceBuffer<float>(rows * qd),
                DeviceBuffer<float>(rows * qd),            DeviceBuffer<float>(rows * qd),
                DeviceBuffer<float>(rows * c.hidden_size), DeviceBuffer<float>(rows * c.ffn_size),
                DeviceBuffer<float>(rows * c.ffn_size),    DeviceBuffer<float>(rows * c.ffn_size),
                {}, {}, {}, {}, 1, {}};
    if (kernel == GpuAttention::eager) w.scores = DeviceBuffer<float>(rows * c.n_heads * std::size_t(S));
    if (kernel == GpuAttention::decode_split) {
        const AttentionShape shape{B, c.n_heads, c.n_kv_heads, T, S, c.head_dim, S};
        w.splits = decode_split_count(shape, gpu.info().multiprocessors);
        w.partial_out = DeviceBuffer<float>(decode_partial_out_floats(shape, w.splits));
        w.partial_ml = DeviceBuffer<float>(decode_partial_ml_floats(shape, w.splits));
    }
    if (kernel == GpuAttention::decode_group) {
        const AttentionShape shape{B, c.n_heads, c.n_kv_heads, T, S, c.head_dim, S};
        w.plan = decode_group_plan(shape, gpu.info().multiprocessors);
        w.partial_out = DeviceBuffer<float>(decode_group_partial_out_floats(shape, w.plan));
        w.partial_ml = DeviceBuffer<float>(decode_group_partial_ml_floats(shape, w.plan));
        w.arrivals = DeviceBuffer<unsigned>(decode_group_arrival_counters(shape));
        w.arrivals.fill_zero();
    }
    return w;
}

// Attention over the cache for the layer's new queries.
//   q_heads: [B, Hq, T, dh], cache: [B, Hkv, capacity, dh] (S rows filled)  ->  heads: [B, Hq, T, dh]
void run_attention(const GpuRuntime& gpu, const AttentionShape& shape, GpuAttention kernel, Workspace& w,
                   const float* k_cache, const float* v_cache) {
    const GpuMask causal{GpuMaskKind::causal, shape.S - shape.T, 0, 0};
    switch (kernel) {
        case GpuAttention::eager:
            attention_eager<float>(gpu.cublas(), shape, causal, w.q_heads.data(), k_cache, v_cache, w.scores.data(),
                                   w.scores.data(), w.heads.data(), gpu.stream());
            break;
        case GpuAttention::flash:
            attention_flash_plain<float>(shape, causal, w.q_heads.data(), k_cache, v_cache, w.heads.data(),
                                         gpu.stream());
            break;
        case GpuAttention::decode_split:
            attention_decode_split<float>(shape, causal, w.q_heads.data(), k_cache, v_cache, w.heads.data(), w.splits,
                                          w.partial_out.data(), w.partial_ml.data(), gpu.stream());
            break;
        case GpuAttention::decode_group:
            attention_decode_group<float>(shape, causal, w.q_heads.data(), k_cache, v_cache, w.heads.data(), w.plan,
                                          w.partial_out.data(), w.partial_ml.data(), w.arrivals.data(), gpu.stream());
            break;
    }
}

// One decoder block on w.x ([B*T, D]) in place: x + attention(norm(x)), then + SwiGLU(norm(.)).
void decoder_layer(const GpuRuntime& gpu, const GpuModel& model, const GpuLayerWeights& lw, GpuKVCache& cache, int l,
                   int B, int T, GpuAttention kernel, Workspace& w, Tensor4<float>* probs) {
    const ModelConfig& c = model.config;
    const int rows = B * T, D = c.hidden_size, dh = c.head_dim, Hq = c.n_heads, Hkv = c.n_kv_heads;
    const int S = int(cache.position) + T;
    cudaStream_t stream = gpu.stream();
    const auto projection = [&](const float* x, const DeviceBuffer<float>& weight, float* y, int K, int N) {
        project(gpu, model.layout, x, weight.data(), y, rows, K, N);  // [B*T, K] -> [B*T, N]
    };
    // --- attention sublayer ---
    rms_norm(w.x.data(), lw.attn_norm.data(), w.h.data(), rows, D, float(c.rms_norm_eps), stream);  // [B*T, D]
    projection(w.h.data(), lw.wq, w.q.data(), D, Hq * dh);                                          // [B, T, Hq, dh]
    projection(w.h.data(), lw.wk, w.k.data(), D, Hkv * dh);                                         // [B, T, Hkv, dh]
    projection(w.h.data(), lw.wv, w.v.data(), D, Hkv * dh);                                         // [B, T, Hkv, dh]
    const bool half_split = c.rope_pairing == RopePairing::half_split;
    rope_inplace(w.q.data(), B, T, Hq, dh, cache.position, c.rope_theta, half_split, stream);
    rope_inplace(w.k.data(), B, T, Hkv, dh, cache.position, c.rope_theta, half_split, stream);
    append_to_cache(w.k.data(), cache.keys[l].data(), B, T, Hkv, dh, cache.capacity, cache.position, stream);
    append_to_cache(w.v.data(), cache.values[l].data(), B, T, Hkv, dh, cache.capacity, cache.position, stream);
    split_heads(w.q.data(), w.q_heads.data(), B, T, Hq, dh, stream);  // [B, Hq, T, dh]

    const AttentionShape shape{B, Hq, Hkv, T, S, dh, cache.capacity};
    run_attention(gpu, shape, kernel, w, cache.keys[l].data(), cache.values[l].data());  // heads: [B, Hq, T, dh]
    if (probs) {  // eager: the scores buffer now holds the probabilities [B, Hq, T, S]
        *probs = Tensor4<float>({std::size_t(B), std::size_t(Hq), std::size_t(T), std::size_t(S)});
        gpu.synchronize();
        CUDA_CHECK(cudaMemcpy(probs->data(), w.scores.data(), probs->size() * sizeof(float), cudaMemcpyDeviceToHost));
    }
    merge_heads(w.heads.data(), w.merged.data(), B, T, Hq, dh, stream);               // [B*T, Hq*dh]
    projection(w.merged.data(), lw.wo, w.update.data(), Hq * dh, D);                  // [B*T, D]
    residual_add(w.x.data(), w.update.data(), 1LL * rows * D, stream);

    // --- feed-forward sublayer ---
    rms_norm(w.x.data(), lw.ffn_norm.data(), w.h.data(), rows, D, float(c.rms_norm_eps), stream);
    projection(w.h.data(), lw.w_gate, w.gate.data(), D, c.ffn_size);                   // [B*T, F]
    projection(w.h.data(), lw.w_up, w.up.data(), D, c.ffn_size);                       // [B*T, F]
    silu_multiply(w.gate.data(), w.up.data(), w.hidden.data(), 1LL * rows * c.ffn_size, stream);
    projection(w.hidden.data(), lw.w_down, w.update.data(), c.ffn_size, D);                // [B*T, D]
    residual_add(w.x.data(), w.update.data(), 1LL * rows * D, stream);
}

}  // namespace

const char* to_string(GpuAttention kernel) {
    switch (kernel) {
        case GpuAttention::eager: return "eager";
        case GpuAttention::flash: return "flash";
        case GpuAttention::decode_split: return "decode_split";
        case GpuAttention::decode_group: return "decode_group";
    }
    return "?";
}

GpuAttention decode_kernel_for(const ModelConfig& c) {
    return decode_group_supports(c.head_dim, c.n_heads / c.n_kv_heads) ? GpuAttention::decode_group
                                                                        : GpuAttention::decode_split;
}

// The GPU kernels have no sink column: a model with attention sinks is refused before upload.
void require_no_sinks(const ModelConfig& c) {
    if (c.attention_sinks)
        throw InputError("the CUDA forward has no attention sinks: run this checkpoint on the CPU (without --device cuda)");
}

GpuModel upload_model(const Model<float>& model) {
    require_no_sinks(model.config);
    require_shapes(model.config, model.weights);
    GpuModel g;
    g.config = model.config;
    g.embedding = upload(model.weights.embedding);
    for (const LayerWeights<float>& w : model.weights.layers)
        g.layers.push_back({upload(w.attn_norm), upload(w.wq), upload(w.wk), upload(w.wv), upload(w.wo),
                            upload(w.ffn_norm), upload(w.w_gate), upload(w.w_up), upload(w.w_down)});
    g.final_norm = upload(model.weights.final_norm);
    if (!model.config.tie_embeddings) g.lm_head = upload(model.weights.lm_head);
    return g;
}

GpuModel upload_model(const PretrainedModel& model) {
    require_no_sinks(model.config);
    GpuModel g;
    g.config = model.config;
    g.layout = WeightLayout::out_in;
    g.embedding = upload(model.embedding);  // [V, D]
    for (const PretrainedLayer& w : model.layers)
        g.layers.push_back({upload(w.attn_norm), upload(w.wq), upload(w.wk), upload(w.wv), upload(w.wo),
                            upload(w.ffn_norm), upload(w.w_gate), upload(w.w_up), upload(w.w_down)});
    g.final_norm = upload(model.final_norm);
    if (!model.config.tie_embeddings) g.lm_head = upload(model.lm_head);  // [V, D]
    return g;
}

GpuKVCache make_gpu_cache(const ModelConfig& c, int batch, int capacity) {
    GpuKVCache cache;
    cache.batch = batch;
    cache.capacity = capacity;
    const std::size_t per_layer = std::size_t(batch) * c.n_kv_heads * std::size_t(capacity) * c.head_dim;
    for (int l = 0; l < c.n_layers; ++l) {
        cache.keys.emplace_back(per_layer);
        cache.values.emplace_back(per_layer);
        cache.keys.back().fill_zero();
        cache.values.back().fill_zero();
    }
    return cache;
}

Tensor3<float> gpu_forward(const GpuRuntime& gpu, const GpuModel& model, GpuKVCache& cache, const TokenIds& tokens,
                           GpuAttention kernel, std::vector<Tensor4<float>>* probs) {
    const ModelConfig& c = model.config;
    const int B = int(tokens.shape(0)), T = int(tokens.shape(1));
    if (B == 0 || T == 0) throw InputError("gpu forward: at least one token per sequence is required");
    if (B != cache.batch) throw InputError("gpu forward: batch differs from the cache's");
    if (cache.position + T > cache.capacity)
        throw InputError("gpu forward: the cache holds " + std::to_string(cache.capacity) + " tokens, " +
                         std::to_string(cache.position + T) + " needed");
    if ((kernel == GpuAttention::decode_split || kernel == GpuAttention::decode_group) && T != 1)
        throw InputError("gpu forward: the decode kernels take one new token per sequence");
    if (kernel == GpuAttention::decode_split && !decode_split_supports(c.head_dim))
        throw InputError("gpu forward: decode_split takes head dims up to 256, not " + std::to_string(c.head_dim));
    if (kernel == GpuAttention::decode_group && !decode_group_supports(c.head_dim, c.n_heads / c.n_kv_heads))
        throw InputError("gpu forward: decode_group is not compiled for head dim " + std::to_string(c.head_dim) +
                         " with " + std::to_string(c.n_heads / c.n_kv_heads) + " query heads per KV head");
    if (kernel == GpuAttention::flash && !flash_plain_supports(c.head_dim))
        throw InputError("gpu forward: the flash kernel is compiled for head dims 8, 64 and 128, not " +
                         std::to_string(c.head_dim));
    if (probs && kernel != GpuAttention::eager) throw InputError("gpu forward: only eager attention keeps probabilities");
    for (const std::int32_t id : tokens)  // the core's check, before any work
        if (id < 0 || id >= c.vocab_size)
            throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(c.vocab_size - 1) + "]");

    const int rows = B * T, S = int(cache.position) + T;
    Workspace w = make_workspace(gpu, c, kernel, B, T, S);
    const DeviceBuffer<std::int32_t> ids(std::vector<std::int32_t>(tokens.begin(), tokens.end()));  // [B*T]
    embedding_gather(model.embedding.data(), ids.data(), w.x.data(), rows, c.hidden_size, gpu.stream());  // [B*T, D]
    if (probs) probs->assign(std::size_t(c.n_layers), {});
    for (int l = 0; l < c.n_layers; ++l)
        decoder_layer(gpu, model, model.layers[l], cache, l, B, T, kernel, w, probs ? &(*probs)[l] : nullptr);
    cache.position += T;

    rms_norm(w.x.data(), model.final_norm.data(), w.h.data(), rows, c.hidden_size, float(c.rms_norm_eps), gpu.stream());
    DeviceBuffer<float> logits(std::size_t(rows) * c.vocab_size);  // [B*T, V]
    if (c.tie_embeddings)
        matmul_transposed(gpu, w.h.data(), model.embedding.data(), logits.data(), rows, c.hidden_size, c.vocab_size);
    else
        project(gpu, model.layout, w.h.data(), model.lm_head.data(), logits.data(), rows, c.hidden_size, c.vocab_size);
    gpu.synchronize();
    Tensor3<float> host({std::size_t(B), std::size_t(T), std::size_t(c.vocab_size)});
    CUDA_CHECK(cudaMemcpy(host.data(), logits.data(), host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return host;
}

}  // namespace anatomy::gpu
