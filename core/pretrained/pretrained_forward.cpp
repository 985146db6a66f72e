#include "pretrained_forward.hpp"

#include <cstring>
#include <numeric>

#include "../ops/attention.hpp"
#include "../ops/heads.hpp"
#include "../ops/linear.hpp"
#include "../ops/rms_norm.hpp"
#include "../ops/rope.hpp"
#include "../ops/swiglu.hpp"

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

Tensor3<float> pretrained_forward(const PretrainedModel& model, PretrainedCache& cache, const TokenIds& tokens,
                                  PretrainedCapture* capture) {
    const ModelConfig& c = model.config;
    const std::size_t B = tokens.shape(0), T = tokens.shape(1);
    if (B == 0 || T == 0) throw InputError("forward: at least one token per sequence is required");
    if (cache.keys.size() != std::size_t(c.n_layers) || cache.batch != B)
        throw InputError("forward: the cache was made for another model or batch size");

    std::vector<std::int64_t> positions(T);  // history, history + 1, ..., history + T - 1
    std::iota(positions.begin(), positions.end(), cache.position);
    Tensor3<float> x = embed_rows(model.embedding, tokens);  // [B, T, D]; validates ids first
    const auto projection = [&](const Tensor3<float>& a, const WeightView& w) { return project(a, w, model.parallel); };
    if (capture) *capture = {};
    // Records a tensor's shape, in the order computed (layer 0 only: every layer has the same).
    auto note = [&](const char* name, const auto& tensor) {
        if (capture) capture->shapes.push_back({name, {tensor.shape().begin(), tensor.shape().end()}});
    };
    note("embedding_rows", x);

    for (int l = 0; l < c.n_layers; ++l) {
        const PretrainedLayer& w = model.layers[std::size_t(l)];
        std::vector<std::uint8_t>& k_stored = cache.keys[std::size_t(l)];
        std::vector<std::uint8_t>& v_stored = cache.values[std::size_t(l)];

        // --- attention sublayer ---
        const Tensor3<float> h = rms_norm(x, w.attn_norm, c.rms_norm_eps);      // [B, T, D]
        const Tensor3<float> q_flat = projection(h, w.wq);                      // [B, T, Hq*dh]
        const Tensor3<float> k_flat = projection(h, w.wk);                      // [B, T, Hkv*dh]
        const Tensor3<float> v_flat = projection(h, w.wv);                      // [B, T, Hkv*dh]
        const Tensor4<float> q = split_heads(q_flat, c.n_heads);                // [B, Hq, T, dh]
        const Tensor4<float> k = split_heads(k_flat, c.n_kv_heads);             // [B, Hkv, T, dh]
        const Tensor4<float> v = split_heads(v_flat, c.n_kv_heads);             // [B, Hkv, T, dh]
        const Tensor4<float> q_rope = apply_rope(q, positions, c.rope_theta, c.rope_pairing);
        const Tensor4<float> k_rope = apply_rope(k, positions, c.rope_theta, c.rope_pairing);

        append(k_stored, k_rope, cache.dtype);                                  // S = history + T rows now
        append(v_stored, v, cache.dtype);
        const Tensor4<float> k_all = widen(k_stored, B, cache.n_kv_heads, cache.head_dim, cache.dtype);  // [B, Hkv, S, dh]
        const Tensor4<float> v_all = widen(v_stored, B, cache.n_kv_heads, cache.head_dim, cache.dtype);  // [B, Hkv, S, dh]
        const std::size_t S = k_all.shape(2);

        const Tensor4<float> scores = attention_scores(q_rope, k_all);              // [B, Hq, T, S]
        Tensor4<float> probs = softmax_rows(apply_mask(scores, causal_mask(T, S))); // [B, Hq, T, S]
        const Tensor4<float> heads = weighted_values(probs, v_all);                 // [B, Hq, T, dh]
        const Tensor3<float> merged = merge_heads(heads);                           // [B, T, Hq*dh]
        const Tensor3<float> update = projection(merged, w.wo);                     // [B, T, D]
        x = residual_add(x, update);                                                // [B, T, D]

        // --- feed-forward sublayer: (silu(h2 W_gate^T) * (h2 W_up^T)) W_down^T ---
        const Tensor3<float> h2 = rms_norm(x, w.ffn_norm, c.rms_norm_eps);          // [B, T, D]
        const Tensor3<float> gate = silu(projection(h2, w.w_gate));                 // [B, T, F]
        const Tensor3<float> up = projection(h2, w.w_up);                           // [B, T, F]
        const Tensor3<float> ffn = projection(Tensor3<float>(gate * up), w.w_down); // [B, T, D]
        x = residual_add(x, ffn);                                                   // [B, T, D]

        if (l == 0) {  // every layer has the same shapes
            note("attn_norm", h); note("q_proj", q_flat); note("k_proj", k_flat); note("v_proj", v_flat);
            note("q_heads", q); note("k_heads", k); note("v_heads", v);
            note("k_cache_layer", k_all); note("v_cache_layer", v_all);
            note("scores", scores); note("probabilities", probs); note("head_outputs", heads);
            note("merged_heads", merged); note("o_proj", update);
            note("gate_proj", gate); note("up_proj", up); note("down_proj", ffn); note("block_output", x);
        }
        if (capture) capture->probabilities.push_back(std::move(probs));
    }
    cache.position += std::int64_t(T);

    const Tensor3<float> final_normed = rms_norm(x, model.final_norm, c.rms_norm_eps);  // [B, T, D]
    Tensor3<float> logits = projection(final_normed, model.lm_head);                    // [B, T, V]
    note("logits", logits);
    return logits;
}

}  // namespace anatomy
