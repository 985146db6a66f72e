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

}  // namespace

template <typename Real>
StreamRun stream_through_cache(const Model<Real>& model, const std::vector<std::int32_t>& tokens, const EvictionSpec& spec,
                               std::size_t generate) {
    require_valid(spec);
    require_tokens(model, tokens);
    const std::size_t N = tokens.size(), V = std::size_t(model.config.vocab_size);
    KVCache<Real> cache = empty_cache<Real>(model.config, 1);
    StreamRun run;
    // The text's tokens, then the generated ones, each read through the cache; the logits
    // after token t predict token t + 1 (a loss) or, after the text, the next generated one.
    for (std::size_t t = 0; t < N || run.continuation.size() < generate; ++t) {
        TokenIds one({1, 1});
        one(0, 0) = t < N ? tokens[t] : run.continuation.back();
        evict_for(cache, spec, 1, model.config);
        const Tensor3<Real> logits = forward(model, cache, one);  // [1, 1, V]
        if (t + 1 < N) run.losses.push_back(next_token_loss(logits.data(), V, tokens[t + 1]));
        else if (run.continuation.size() < generate) run.continuation.push_back(most_likely(logits.data(), V));
    }
    return run;
}

namespace {

// The logits after read[0 .. end) from a fresh pass over its last `window` tokens (at
// positions 0 .. window-1): the reference's one prediction.  [1, 1, V]
template <typename Real>
Tensor3<Real> recomputed_prediction(const Model<Real>& model, const std::vector<std::int32_t>& read, std::size_t end,
                                    std::size_t window) {
    const std::size_t from = end > window ? end - window : 0;
    TokenIds ids({1, end - from});
    std::copy(read.begin() + std::ptrdiff_t(from), read.begin() + std::ptrdiff_t(end), ids.begin());
    return last_position_logits(model, ids);  // only the last prediction is needed
}

}  // namespace

template <typename Real>
std::vector<double> recomputed_losses(const Model<Real>& model, const std::vector<std::int32_t>& tokens, std::size_t window,
                                      std::size_t from, std::size_t to) {
    if (window == 0) throw InputError("the window must hold at least 1 entry");
    require_tokens(model, tokens);
    if (from > to || to > tokens.size() - 1)
        throw InputError("predictions " + std::to_string(from) + " to " + std::to_string(to) + " of a text with " +
                         std::to_string(tokens.size() - 1));
    const std::size_t V = std::size_t(model.config.vocab_size);
    std::vector<double> losses;
    for (std::size_t t = from; t < to; ++t)
        losses.push_back(next_token_loss(recomputed_prediction(model, tokens, t + 1, window).data(), V, tokens[t + 1]));
    return losses;
}

template <typename Real>
std::vector<std::int32_t> recomputed_continuation(const Model<Real>& model, const std::vector<std::int32_t>& tokens,
                                                  std::size_t window, std::size_t generate) {
    if (window == 0) throw InputError("the window must hold at least 1 entry");
    require_tokens(model, tokens);
    const std::size_t V = std::size_t(model.config.vocab_size);
    std::vector<std::int32_t> read = tokens;  // the text, then each generated token
    for (std::size_t g = 0; g < generate; ++g)
        read.push_back(most_likely(recomputed_prediction(model, read, read.size(), window).data(), V));
    return {read.begin() + std::ptrdiff_t(tokens.size()), read.end()};
}

template <typename Real>
StreamRun stream_recomputed(const Model<Real>& model, const std::vector<std::int32_t>& tokens, std::size_t window,
                            std::size_t generate) {
    return {recomputed_losses(model, tokens, window, 0, tokens.size() - 1),
            recomputed_continuation(model, tokens, window, generate)};
}

template StreamRun stream_through_cache(const Model<float>&, const std::vector<std::int32_t>&, const EvictionSpec&, std::size_t);
template StreamRun stream_through_cache(const Model<double>&, const std::vector<std::int32_t>&, const EvictionSpec&, std::size_t);
template std::vector<double> recomputed_losses(const Model<float>&, const std::vector<std::int32_t>&, std::size_t, std::size_t, std::size_t);
template std::vector<double> recomputed_losses(const Model<double>&, const std::vector<std::int32_t>&, std::size_t, std::size_t, std::size_t);
template std::vector<std::int32_t> recomputed_continuation(const Model<float>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);
template std::vector<std::int32_t> recomputed_continuation(const Model<double>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);
template StreamRun stream_recomputed(const Model<float>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);
template StreamRun stream_recomputed(const Model<double>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);

}  // namespace anatomy
