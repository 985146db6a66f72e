#include "pretrained_forward.hpp"

#include <cstring>
#include <numeric>

#include "../model/decoder_layer.hpp"
#include "../ops/rms_norm.hpp"

namespace anatomy {
namespace {

// Appends x [B, H, T, dh] to a cache layer stored [S, B, H, dh] in `dtype`.
void append(std::vector<std::uint8_t>& stored, const Tensor4<float>& x, DType dtype) {
    const std::size_t B = x.shape(0), H = x.shape(1), T = x.shape(2), dh = x.shape(3);
    const std::size_t scalar = dtype_size(dtype);
    std::size_t at = stored.size();
    stored.resize(at + B * H * T * dh * scalar);
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t d = 0; d < dh; ++d, at += scalar) {
                    const float value = x(b, h, t, d);
                    if (dtype == DType::f32) {
                        std::memcpy(stored.data() + at, &value, 4);
                    } else {
                        const std::uint16_t bits = float_to_bfloat16(value);
                        std::memcpy(stored.data() + at, &bits, 2);
                    }
                }
}

// A cache layer stored [S, B, H, dh] as the float tensor attention reads.   ->  [B, H, S, dh]
Tensor4<float> widen(const std::vector<std::uint8_t>& stored, std::size_t B, std::size_t H, std::size_t dh, DType dtype) {
    const std::size_t scalar = dtype_size(dtype), S = stored.size() / (B * H * dh * scalar);
    Tensor4<float> out({B, H, S, dh});
    std::size_t at = 0;
    for (std::size_t s = 0; s < S; ++s)
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t d = 0; d < dh; ++d, at += scalar) {
                    if (dtype == DType::f32) {
                        std::memcpy(&out(b, h, s, d), stored.data() + at, 4);
                    } else {
                        std::uint16_t bits;
                        std::memcpy(&bits, stored.data() + at, 2);
                        out(b, h, s, d) = bfloat16_to_float(bits);
                    }
                }
    return out;
}

// A pretrained cache layer as decoder_layer sees it: rows stored in the cache's
// dtype, read back as float32 [B, Hkv, S, dh].
struct StoredCacheLayer {
    std::vector<std::uint8_t>& k;  // [S, B, Hkv, dh] in dtype
    std::vector<std::uint8_t>& v;
    const PretrainedCache& cache;
    Tensor4<float> k_all, v_all;   // every cached row, widened after the append

    void append(const Tensor4<float>& k_rope, const Tensor4<float>& v_new) {
        ::anatomy::append(k, k_rope, cache.dtype);
        ::anatomy::append(v, v_new, cache.dtype);
        k_all = widen(k, cache.batch, cache.n_kv_heads, cache.head_dim, cache.dtype);
        v_all = widen(v, cache.batch, cache.n_kv_heads, cache.head_dim, cache.dtype);
    }
    const Tensor4<float>& keys() const { return k_all; }
    const Tensor4<float>& values() const { return v_all; }
};

}  // namespace

std::size_t PretrainedCache::stored_bytes() const {
    std::size_t total = 0;
    for (const auto& k : keys) total += k.size();
    for (const auto& v : values) total += v.size();
    return total;
}

PretrainedCache empty_pretrained_cache(const ModelConfig& config, std::size_t batch, DType dtype) {
    if (dtype != DType::f32 && dtype != DType::bf16) throw InputError("a KV cache is float32 or bfloat16");
    PretrainedCache cache;
    cache.dtype = dtype;
    cache.batch = batch;
    cache.n_kv_heads = std::size_t(config.n_kv_heads);
    cache.head_dim = std::size_t(config.head_dim);
    cache.keys.assign(std::size_t(config.n_layers), {});
    cache.values.assign(std::size_t(config.n_layers), {});
    return cache;
}

void rewind_pretrained_cache(PretrainedCache& cache, std::int64_t tokens) {
    if (tokens < 0 || tokens > cache.position)
        throw InputError("the cache holds " + std::to_string(cache.position) + " tokens; cannot keep " + std::to_string(tokens));
    const std::size_t row_bytes = cache.batch * cache.n_kv_heads * cache.head_dim * dtype_size(cache.dtype);  // one position
    for (auto& k : cache.keys) k.resize(std::size_t(tokens) * row_bytes);
    for (auto& v : cache.values) v.resize(std::size_t(tokens) * row_bytes);
    cache.position = tokens;
}

Tensor3<float> pretrained_forward(const PretrainedModel& model, PretrainedCache& cache, const TokenIds& tokens,
                                  PassCapture* capture) {
    const ModelConfig& c = model.config;
    const std::size_t B = tokens.shape(0), T = tokens.shape(1);
    if (B == 0 || T == 0) throw InputError("forward: at least one token per sequence is required");
    if (cache.keys.size() != std::size_t(c.n_layers) || cache.batch != B)
        throw InputError("forward: the cache was made for another model or batch size");

    std::vector<std::int64_t> positions(T);  // history, history + 1, ..., history + T - 1
    std::iota(positions.begin(), positions.end(), cache.position);
    Tensor3<float> x = embed_rows(model.embedding, tokens);  // [B, T, D]; validates ids first
    if (capture) *capture = {};
    // Records a tensor's shape, in the order computed (layer 0 only: every layer has the same).
    auto note = [&](const char* name, const auto& tensor) {
        if (capture) capture->shapes.push_back({name, {tensor.shape().begin(), tensor.shape().end()}});
    };
    note("embedding_rows", x);

    for (int l = 0; l < c.n_layers; ++l) {
        StoredCacheLayer layer_cache{cache.keys[std::size_t(l)], cache.values[std::size_t(l)], cache, {}, {}};
        LayerCapture<float> layer;
        x = decoder_layer(c, model.layers[std::size_t(l)], model.parallel, x, positions, layer_cache,
                          AttentionPath::grouped, capture ? &layer : nullptr);  // [B, T, D]
        if (!capture) continue;
        if (l == 0)  // every layer has the same shapes
            capture->shapes.insert(capture->shapes.end(), layer.shapes.begin(), layer.shapes.end());
        capture->layers.emplace_back().probs = std::move(layer.probs);
    }
    cache.position += std::int64_t(T);

    const Tensor3<float> final_normed = rms_norm(x, model.final_norm, c.rms_norm_eps);  // [B, T, D]
    Tensor3<float> logits = project(final_normed, model.lm_head, model.parallel);       // [B, T, V]
    note("logits", logits);
    return logits;
}

}  // namespace anatomy
