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

// Feeds the text's tokens, then the generated ones, to `step` (id -> logits [1, T, V],
// the last row the prediction after id), and records each loss and the continuation.
template <typename Real, typename Step>
StreamRun decode(const std::vector<std::int32_t>& tokens, std::size_t generate, std::size_t V, const Step& step) {
    StreamRun run;
    const std::size_t N = tokens.size();
    for (std::size_t t = 0; t < N || run.continuation.size() < generate; ++t) {
        const std::int32_t id = t < N ? tokens[t] : run.continuation.back();
        const Tensor3<Real> logits = step(id);
        const Real* row = logits.data() + (logits.shape(1) - 1) * V;
        if (t + 1 < N) run.losses.push_back(next_token_loss(row, V, tokens[t + 1]));
        else if (run.continuation.size() < generate) run.continuation.push_back(most_likely(row, V));
    }
    return run;
}

}  // namespace

template <typename Real>
StreamRun stream_through_cache(const Model<Real>& model, const std::vector<std::int32_t>& tokens, const EvictionSpec& spec,
                               std::size_t generate) {
    require_valid(spec);
    require_tokens(model, tokens);
    KVCache<Real> cache = empty_cache<Real>(model.config, 1);
    return decode<Real>(tokens, generate, std::size_t(model.config.vocab_size), [&](std::int32_t id) {
        evict_for(cache, spec, 1, model.config);
        TokenIds one({1, 1});
        one(0, 0) = id;
        return forward(model, cache, one);  // [1, 1, V]
    });
}

template <typename Real>
StreamRun stream_recomputed(const Model<Real>& model, const std::vector<std::int32_t>& tokens, std::size_t window,
                            std::size_t generate) {
    if (window == 0) throw InputError("the window must hold at least 1 entry");
    require_tokens(model, tokens);
    std::vector<std::int32_t> read;  // every token fed so far
    return decode<Real>(tokens, generate, std::size_t(model.config.vocab_size), [&](std::int32_t id) {
        read.push_back(id);
        const std::size_t from = read.size() > window ? read.size() - window : 0;
        TokenIds ids({1, read.size() - from});
        std::copy(read.begin() + std::ptrdiff_t(from), read.end(), ids.begin());
        return last_position_logits(model, ids);  // [1, 1, V]: only the last prediction is needed
    });
}

template StreamRun stream_through_cache(const Model<float>&, const std::vector<std::int32_t>&, const EvictionSpec&, std::size_t);
template StreamRun stream_through_cache(const Model<double>&, const std::vector<std::int32_t>&, const EvictionSpec&, std::size_t);
template StreamRun stream_recomputed(const Model<float>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);
template StreamRun stream_recomputed(const Model<double>&, const std::vector<std::int32_t>&, std::size_t, std::size_t);

}  // namespace anatomy
