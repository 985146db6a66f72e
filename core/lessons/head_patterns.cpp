#include "head_patterns.hpp"

#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "../model/random.hpp"
#include "../verify/check_suite.hpp"

namespace anatomy {
namespace {

// The mean over queries t in [from, to) of probs[l][0, h, t, key(t)], for every layer and head,
// and the uniform baseline: the mean of 1 / (t + 1) over the same queries.
template <typename Key>
PatternScores mean_on_key(const char* name, const std::vector<Tensor4<float>>& probs, std::size_t from, std::size_t to,
                          Key key) {
    if (probs.empty()) throw InputError(std::string(name) + ": no layers");
    const std::size_t T = probs.front().shape(2);
    if (from >= to || to > T)
        throw InputError(std::string(name) + ": needs queries " + std::to_string(from) + " to " + std::to_string(to - 1) +
                         ", the pass has " + std::to_string(T));
    PatternScores scores{name, {}, 0};
    for (const Tensor4<float>& p : probs) {  // [1, Hq, T, S]
        std::vector<double>& layer = scores.heads.emplace_back(p.shape(1), 0.0);
        for (std::size_t h = 0; h < p.shape(1); ++h) {
            double sum = 0;
            for (std::size_t t = from; t < to; ++t) sum += p(0, h, t, key(t));
            layer[h] = sum / double(to - from);
        }
    }
    for (std::size_t t = from; t < to; ++t) scores.uniform_baseline += 1.0 / double(t + 1);
    scores.uniform_baseline /= double(to - from);
    return scores;
}

std::size_t queries(const std::vector<Tensor4<float>>& probs) { return probs.empty() ? 0 : probs.front().shape(2); }

TokenIds one_row(const std::vector<std::int32_t>& ids) {
    TokenIds tokens({1, ids.size()});
    std::copy(ids.begin(), ids.end(), tokens.begin());
    return tokens;
}

}  // namespace

std::vector<Tensor4<float>> pass_probs(Backend& backend, const std::vector<std::int32_t>& ids) {
    backend.reset(1);
    PassCapture capture;
    backend.forward(one_row(ids), &capture);
    return captured_probs(capture);
}

PatternScores previous_token_scores(const std::vector<Tensor4<float>>& probs) {
    return mean_on_key("previous_token", probs, 1, queries(probs), [](std::size_t t) { return t - 1; });
}

PatternScores first_token_scores(const std::vector<Tensor4<float>>& probs) {
    const std::size_t T = queries(probs);
    return mean_on_key("first_token", probs, T / 2, T, [](std::size_t) { return std::size_t(0); });
}

PatternScores learned_sink_shares(const std::vector<Tensor4<float>>& probs) {
    const std::size_t T = queries(probs);
    if (T < 2) throw InputError("learned_sink: needs at least 2 queries");
    PatternScores shares{"learned_sink", {}, 0};
    for (const Tensor4<float>& p : probs) {  // [1, Hq, T, T]
        std::vector<double>& layer = shares.heads.emplace_back(p.shape(1), 0.0);
        for (std::size_t h = 0; h < p.shape(1); ++h) {
            for (std::size_t t = T / 2; t < T; ++t) {
                double row = 0;  // what the keys got; the sink had the rest
                for (std::size_t s = 0; s <= t; ++s) row += p(0, h, t, s);
                layer[h] += 1.0 - row;
            }
            layer[h] /= double(T - T / 2);
        }
    }
    return shares;
}

PatternScores self_scores(const std::vector<Tensor4<float>>& probs) {
    return mean_on_key("self", probs, 1, queries(probs), [](std::size_t t) { return t; });
}

PatternScores induction_scores(const std::vector<Tensor4<float>>& probs, std::size_t R) {
    if (R < 2 || queries(probs) != 2 * R + 1)
        throw InputError("induction: the pass must hold BOS and R >= 2 ids written twice (2R + 1 tokens)");
    return mean_on_key("induction", probs, R + 1, 2 * R + 1, [R](std::size_t t) { return t - R + 1; });
}

std::vector<std::int32_t> repeated_random_ids(std::int32_t bos_id, std::int32_t first_id, std::int32_t vocab_size,
                                              std::size_t R, std::uint64_t seed) {
    if (first_id < 0 || vocab_size - first_id < std::int64_t(R))
        throw InputError("induction: the ids [" + std::to_string(first_id) + ", " + std::to_string(vocab_size) +
                         ") hold fewer than " + std::to_string(R) + " distinct ids");
    // A partial Fisher-Yates shuffle of the range: R distinct ids.
    std::vector<std::int32_t> pool(std::size_t(vocab_size - first_id));
    std::iota(pool.begin(), pool.end(), first_id);
    SplitMix64 random(seed);
    for (std::size_t i = 0; i < R; ++i) {
        const std::size_t j = i + std::size_t(random.next_u64() % (pool.size() - i));
        std::swap(pool[i], pool[j]);
    }
    std::vector<std::int32_t> ids = {bos_id};
    for (int copy = 0; copy < 2; ++copy) ids.insert(ids.end(), pool.begin(), pool.begin() + std::ptrdiff_t(R));
    return ids;
}

std::int32_t first_ordinary_id(std::int32_t vocab_size) {
    return vocab_size >= 259 + std::int32_t(induction_length) ? 259 : 3;
}

HeadPatterns head_patterns(Backend& backend, const std::vector<std::int32_t>& text_ids, std::int32_t bos_id,
                           std::size_t R, std::uint64_t seed, std::int32_t first_id, std::size_t strings) {
    if (text_ids.size() < 2) throw InputError("head patterns need a text of at least 2 tokens");
    if (strings < 1) throw InputError("the induction score needs at least 1 random string");
    if (bos_id < 0) throw InputError("head patterns need a beginning-of-text token: this vocabulary has none");
    const std::int32_t V = backend.config().vocab_size;
    const std::int32_t first = first_id < 0 ? first_ordinary_id(V) : first_id;
    // The longest string up to induction_length that the ids can spell without repeating one.
    if (R == 0) R = std::min<std::size_t>(induction_length, std::size_t(std::max(0, V - first)));
    HeadPatterns out;
    out.text_ids = text_ids;
    out.induction_ids = repeated_random_ids(bos_id, first, V, R, seed);
    out.induction_length = R;
    out.induction_strings = strings;
    const std::vector<Tensor4<float>> text = pass_probs(backend, text_ids);
    // The mean of the strings' scores, head by head: [L][Hq].
    PatternScores induction = induction_scores(pass_probs(backend, out.induction_ids), R);
    for (std::size_t i = 1; i < strings; ++i) {
        const PatternScores more = induction_scores(pass_probs(backend, repeated_random_ids(bos_id, first, V, R, seed + i)), R);
        for (std::size_t l = 0; l < induction.heads.size(); ++l)
            for (std::size_t h = 0; h < induction.heads[l].size(); ++h) induction.heads[l][h] += more.heads[l][h];
    }
    for (std::vector<double>& layer : induction.heads)
        for (double& score : layer) score /= double(strings);
    out.patterns = {previous_token_scores(text), first_token_scores(text), self_scores(text), induction};
    return out;
}

nlohmann::json head_patterns_to_json(const HeadPatterns& patterns) {
    nlohmann::json list = nlohmann::json::array();
    for (const PatternScores& p : patterns.patterns) {
        nlohmann::json strongest = nullptr, showing = nlohmann::json::array();
        double best = -1;
        for (std::size_t l = 0; l < p.heads.size(); ++l)
            for (std::size_t h = 0; h < p.heads[l].size(); ++h) {
                const double score = p.heads[l][h];
                if (score > best) best = score, strongest = {{"layer", l}, {"head", h}, {"score", score}};
                if (score >= pattern_threshold) showing.push_back({l, h});
            }
        list.push_back({{"name", p.name},
                        {"heads", p.heads},
                        {"uniform_baseline", p.uniform_baseline},
                        {"strongest", strongest},
                        {"showing", showing}});
    }
    return {{"threshold", pattern_threshold},
            {"text_ids", patterns.text_ids},
            {"induction_ids", patterns.induction_ids},
            {"induction_length", patterns.induction_length},
            {"induction_strings", patterns.induction_strings},
            {"patterns", list}};
}

}  // namespace anatomy
