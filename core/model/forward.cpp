#include "forward.hpp"

#include <numeric>

#include "../ops/embedding.hpp"
#include "../ops/logits.hpp"

namespace anatomy {
namespace {

// The tiny model's cache layer as decoder_layer sees it: tensors that grow by T rows.
// [anatomy:tiny_cache_layer]
template <typename Real>
struct TensorCacheLayer {
    Tensor4<Real>& k;  // [B, Hkv, S, dh]
    Tensor4<Real>& v;  // [B, Hkv, S, dh]
    void append(const Tensor4<Real>& k_rope, const Tensor4<Real>& v_new) {
        k = append_rows(k, k_rope);
        v = append_rows(v, v_new);
    }
    const Tensor4<Real>& keys() const { return k; }
    const Tensor4<Real>& values() const { return v; }
};
// [/anatomy:tiny_cache_layer]

}  // namespace

template <typename Real>
Tensor3<Real> forward(const Model<Real>& model, KVCache<Real>& cache, const TokenIds& tokens, AttentionPath path,
                      ForwardCapture<Real>* capture, const ExternalAttention<Real>* external) {
    const ModelConfig& c = model.config;
    const std::size_t B = tokens.shape(0), T = tokens.shape(1);
    if (B == 0 || T == 0) throw InputError("forward: at least one token per sequence is required");
    if (cache.keys.size() != std::size_t(c.n_layers)) throw InputError("forward: cache has the wrong number of layers");
    if (cache.batch() != B)
        throw InputError("forward: batch of " + std::to_string(B) + " sequences, but the cache holds " +
                         std::to_string(cache.batch()));

    // [anatomy:forward_inputs]
    // Positions continue from the cache: history, history + 1, ..., history + T - 1.
    std::vector<std::int64_t> positions(T);
    std::iota(positions.begin(), positions.end(), cache.position);

    Tensor3<Real> x = embed(model.weights.embedding, tokens);  // [B, T, D]; validates ids first
    // [/anatomy:forward_inputs]
    if (capture) {
        capture->positions = positions;
        capture->layers.assign(std::size_t(c.n_layers), {});
    }
    // [anatomy:forward_layers]
    for (int l = 0; l < c.n_layers; ++l) {
        TensorCacheLayer<Real> layer_cache{cache.keys[l], cache.values[l]};
        x = decoder_layer(c, model.weights.layers[l], ParallelFor{}, x, positions, layer_cache, path,
                          capture ? &capture->layers[l] : nullptr, external);
    }
    cache.position += std::int64_t(T);
    // [/anatomy:forward_layers]

    // [anatomy:forward_head]
    Tensor3<Real> final_normed = rms_norm(x, model.weights.final_norm, c.rms_norm_eps);  // [B, T, D]
    Tensor3<Real> logits = c.tie_embeddings ? tied_logits(final_normed, model.weights.embedding)  // [B, T, V]
                                            : linear(final_normed, model.weights.lm_head);
    // [/anatomy:forward_head]
    if (capture) capture->final_normed = std::move(final_normed);
    return logits;
}

template <typename Real>
Tensor3<Real> full_forward(const Model<Real>& model, const TokenIds& tokens, AttentionPath path,
                           ForwardCapture<Real>* capture) {
    KVCache<Real> cache = empty_cache<Real>(model.config, tokens.shape(0));
    return forward(model, cache, tokens, path, capture);
}

template <typename Real>
Tensor3<Real> last_position_logits(const Model<Real>& model, const TokenIds& tokens) {
    const ModelConfig& c = model.config;
    const std::size_t B = tokens.shape(0), T = tokens.shape(1);
    if (T < 2) return full_forward(model, tokens);
    KVCache<Real> cache = empty_cache<Real>(c, B);
    TokenIds earlier({B, T - 1}), last({B, 1});
    for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t t = 0; t + 1 < T; ++t) earlier(b, t) = tokens(b, t);
        last(b, 0) = tokens(b, T - 1);
    }
    std::vector<std::int64_t> positions(T - 1);
    std::iota(positions.begin(), positions.end(), 0);

    // The earlier tokens through every layer but the last, filling those layers' caches.
    Tensor3<Real> x = embed(model.weights.embedding, earlier);  // [B, T-1, D]
    for (int l = 0; l + 1 < c.n_layers; ++l) {
        TensorCacheLayer<Real> layer_cache{cache.keys[l], cache.values[l]};
        x = decoder_layer(c, model.weights.layers[l], ParallelFor{}, x, positions, layer_cache, AttentionPath::grouped,
                          static_cast<LayerCapture<Real>*>(nullptr));
    }
    // The last layer needs only their keys (after RoPE) and values, as decoder_layer makes them.
    const LayerWeights<Real>& w = model.weights.layers.back();
    const Tensor3<Real> h = rms_norm(x, w.attn_norm, c.rms_norm_eps);                                    // [B, T-1, D]
    cache.keys.back() = apply_rope(split_heads(linear(h, w.wk), c.n_kv_heads), positions, c.rope_theta, c.rope_pairing);  // [B, Hkv, T-1, dh]
    cache.values.back() = split_heads(linear(h, w.wv), c.n_kv_heads);                                  // [B, Hkv, T-1, dh]
    cache.position = std::int64_t(T - 1);

    // The last token through every layer, reading that cache: a decode step.
    return forward(model, cache, last);  // [B, 1, V]
}

template Tensor3<float> last_position_logits(const Model<float>&, const TokenIds&);
template Tensor3<double> last_position_logits(const Model<double>&, const TokenIds&);
template Tensor3<float> forward(const Model<float>&, KVCache<float>&, const TokenIds&, AttentionPath, ForwardCapture<float>*,
                                 const ExternalAttention<float>*);
template Tensor3<double> forward(const Model<double>&, KVCache<double>&, const TokenIds&, AttentionPath, ForwardCapture<double>*,
                                  const ExternalAttention<double>*);
template Tensor3<float> full_forward(const Model<float>&, const TokenIds&, AttentionPath, ForwardCapture<float>*);
template Tensor3<double> full_forward(const Model<double>&, const TokenIds&, AttentionPath, ForwardCapture<double>*);

}  // namespace anatomy
