#include "stream_losses.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "../model/forward.hpp"

namespace anatomy {
namespace {

template <typename Real>
void require_tokens(const Model<Real>& model, const std::vector<std::int32_t>& tokens) {
    if (tokens.size() < 2) throw InputError("a stream needs at least 2 tokens (one to read, one to predict)");
    for (const std::int32_t id : tokens)
        if (id < 0 || id >= model.config.vocab_size)
            throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(model.config.vocab_size) + ")");
}

// -ln softmax(row)[target], in double: the row's maximum subtracted first.
template <typename Real>
double next_token_loss(const Real* row, std::size_t V, std::int32_t target) {
    double max = row[0];
    for (std::size_t v = 1; v < V; ++v) max = std::max(max, double(row[v]));
    double sum = 0;
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - max);
    return std::log(sum) - (double(row[std::size_t(target)]) - max);
}

// The most likely id of a row of logits (the lowest among equals).
template <typename Real>
std::int32_t most_likely(const Real* row, std::size_t V) {
    return std::int32_t(std::max_element(row, row + V) - row);
}

TokenIds one(std::int32_t id) {
    TokenIds t({1, 1});
    t(0, 0) = id;
    return t;
}

}  // namespace

template <typename Real>
std::vector<double> streamed_losses(const Model<Real>& model, const std::vector<std::int32_t>& tokens, const EvictionSpec& spec) {
    require_valid(spec);
    require_tokens(model, tokens);
    const std::size_t V = std::size_t(model.config.vocab_size);
    KVCache<Real> cache = empty_cache<Real>(model.config, 1);
    std::vector<double> losses;
    for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
        evict_for(cache, spec, 1, model.config);
        const Tensor3<Real> logits = forward(model, cache, one(tokens[t]));  // [1, 1, V]
        losses.push_back(next_token_loss(logits.data(), V, tokens[t + 1]));
    }
    return losses;
}

template <typename Real>
std::vector<double> recomputed_losses(const Model<Real>& model, const std::vector<std::int32_t>& tokens, std::size_t window) {
    if (window == 0) throw InputError("the window must hold at least 1 entry");
    require_tokens(model, tokens);
    const std::size_t V = std::size_t(model.config.vocab_size);
    std::vector<double> losses;
    for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
        const std::size_t from = t + 1 > window ? t + 1 - window : 0;
        TokenIds ids({1, t + 1 - from});
        std::copy(tokens.begin() + std::ptrdiff_t(from), tokens.begin() + std::ptrdiff_t(t + 1), ids.begin());
        const Tensor3<Real> logits = full_forward(model, ids);  // [1, t + 1 - from, V]
        losses.push_back(next_token_loss(logits.data() + (t - from) * V, V, tokens[t + 1]));
    }
    return losses;
}

template <typename Real>
std::vector<std::int32_t> streamed_continuation(const Model<Real>& model, const std::vector<std::int32_t>& tokens,
                                                const EvictionSpec& spec, std::size_t count) {
    require_valid(spec);
    if (tokens.empty()) throw InputError("a continuation needs at least 1 token to follow");
    const std::size_t V = std::size_t(model.config.vocab_size);
    KVCache<Real> cache = empty_cache<Real>(model.config, 1);
    std::vector<std::int32_t> out;
    std::int32_t next = tokens[0];
    for (std::size_t t = 0; t < tokens.size() + count; ++t) {
        const std::int32_t id = t < tokens.size() ? tokens[t] : next;
        if (t >= tokens.size()) out.push_back(id);
        if (out.size() == count) break;
        evict_for(cache, spec, 1, model.config);
        const Tensor3<Real> logits = forward(model, cache, one(id));  // [1, 1, V]
        next = most_likely(logits.data(), V);
    }
    return out;
}

template <typename Real>
std::vector<std::int32_t> recomputed_continuation(const Model<Real>& model, const std::vector<std::int32_t>& tokens,
                                                  std::size_t window, std::size_t count) {
    if (window == 0) throw InputError("the window must hold at least 1 entry");
    if (tokens.empty()) throw InputError("a continuation needs at least 1 token to follow");
    const std::size_t V = std::size_t(model.config.vocab_size);
    std::vector<std::int32_t> text = tokens, out;
    while (out.size() < count) {
        const std::size_t from = text.size() > window ? text.size() - window : 0;
        TokenIds ids({1, text.size() - from});
        std::copy(text.begin() + std::ptrdiff_t(from), text.end(), ids.begin());
        const Tensor3<Real> logits = full_forward(model, ids);  // [1, W', V]
        const std::int32_t next = most_likely(logits.data() + (text.size() - from - 1) * V, V);
        out.push_back(next);
        text.push_back(next);
    }
    return out;
}

template std::vector<std::int32_t> streamed_continuation(const Model<float>&, const std::vector<std::int32_t>&, const EvictionSpec&, std::size_t);
template std::vector<std::int32_t> streamed_continuation(const Model<double>&, const std::vector<std::int32_t>&, const EvictionSpec&, std::size_t);
template std::vector<std::int32_t> recomputed_continuation(const Model<float>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);
template std::vector<std::int32_t> recomputed_continuation(const Model<double>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);
template std::vector<double> streamed_losses(const Model<float>&, const std::vector<std::int32_t>&, const EvictionSpec&);
template std::vector<double> streamed_losses(const Model<double>&, const std::vector<std::int32_t>&, const EvictionSpec&);
template std::vector<double> recomputed_losses(const Model<float>&, const std::vector<std::int32_t>&, std::size_t);
template std::vector<double> recomputed_losses(const Model<double>&, const std::vector<std::int32_t>&, std::size_t);

}  // namespace anatomy
