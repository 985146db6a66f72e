// What each attention head does, as numbers: four patterns, each the mean
// probability a head gives one particular key, measured on a model's own passes.
//   previous token  on ordinary text: mean over queries t >= 1 of p[t][t - 1]
//   first token     on ordinary text: mean over queries t in [T/2, T) of p[t][0]
//                   (the attention sink; the probe's sink_stats are this score)
//   self            on ordinary text: mean over queries t >= 1 of p[t][t]
//   induction       on BOS + R random ids + the same R ids again: mean over the
//                   second copy's queries t in [R + 1, 2R] of p[t][t - R + 1], the
//                   key just after the earlier occurrence of the current token;
//                   with several strings, the mean of their scores (one string's
//                   score moves by about 0.05 from one string to the next)
// Query 0 is left out where it would count for free (it can only read itself).
// Each score has a uniform baseline: what a head that spreads every row evenly
// over its visible keys 0..t would score, mean of 1 / (t + 1) over the same queries.
// A head "shows" a pattern when its score is at least `pattern_threshold`: more
// than half of its attention, on average, goes to that one key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../tensor.hpp"
#include "../verify/backend.hpp"

namespace anatomy {

inline constexpr double pattern_threshold = 0.5;
// The induction pass's random ids: this many, written twice after BOS (2R + 1 tokens).
inline constexpr std::size_t induction_length = 32;

// One pattern's score for every head: [L][Hq], and its uniform baseline.
struct PatternScores {
    std::string name;                          // "previous_token", "first_token", "self", "induction"
    std::vector<std::vector<double>> heads;    // [L][Hq]
    double uniform_baseline = 0;
};

// Every layer's probabilities [1, Hq, T, T] for `ids`, one pass from an empty cache.
std::vector<Tensor4<float>> pass_probs(Backend& backend, const std::vector<std::int32_t>& ids);

// Scores from one pass's probabilities, every layer [1, Hq, T, T] (captured_probs).
PatternScores previous_token_scores(const std::vector<Tensor4<float>>& probs);
PatternScores first_token_scores(const std::vector<Tensor4<float>>& probs);
// A model with learned sink logits: what each head gives its sink, the mean over the
// first-token score's queries t in [T/2, T) of 1 - sum_s p[t][s] ("learned_sink";
// baseline 0: a plain softmax gives the sink nothing).
PatternScores learned_sink_shares(const std::vector<Tensor4<float>>& probs);
PatternScores self_scores(const std::vector<Tensor4<float>>& probs);
// probs from the pass over repeated_random_ids(..., R, ...): [1, Hq, 2R + 1, 2R + 1].
PatternScores induction_scores(const std::vector<Tensor4<float>>& probs, std::size_t R);

// BOS, then R distinct ids drawn (seeded, SplitMix64) from [first_id, vocab_size),
// then the same R ids again.  ->  [2R + 1]
// Throws InputError when the range holds fewer than R ids.
std::vector<std::int32_t> repeated_random_ids(std::int32_t bos_id, std::int32_t first_id, std::int32_t vocab_size,
                                              std::size_t R, std::uint64_t seed);

// The first id of a Llama-style vocabulary that is an ordinary piece: ids 0, 1, 2
// are unk, BOS and EOS and 3 to 258 the byte pieces <0x00>..<0xFF> (llama2.c and
// Hugging Face Llama tokenizers), so 259 when the vocabulary has room beyond them
// for the induction ids, else 3 (a byte-less vocabulary).
std::int32_t first_ordinary_id(std::int32_t vocab_size);

struct HeadPatterns {
    std::vector<PatternScores> patterns;  // previous_token, first_token, self, induction
    std::vector<std::int32_t> text_ids;       // the ordinary text's ids [T]
    std::vector<std::int32_t> induction_ids;  // [2R + 1], the first string's
    std::size_t induction_length = 0;         // R
    std::size_t induction_strings = 1;        // how many strings the induction score averages
};

// Passes through `backend` (each from an empty cache, batch 1): `text_ids` (at least 2
// ids), then repeated_random_ids(bos_id, first_id, V, R, seed + i) for each of the
// `strings` strings i = 0 .. strings - 1 (at least 1), whose induction scores are
// averaged; first_id -1 means first_ordinary_id(V) (a character vocabulary passes 1:
// everything after BOS).
// R = 0 means induction_length, or fewer when [first_id, V) holds fewer ids (the
// tiny model's 32-id vocabulary has 29 after unk, BOS and EOS). Throws InputError
// when it holds fewer than 2, or without a BOS (bos_id < 0).
HeadPatterns head_patterns(Backend& backend, const std::vector<std::int32_t>& text_ids, std::int32_t bos_id,
                           std::size_t R = 0, std::uint64_t seed = 1, std::int32_t first_id = -1, std::size_t strings = 1);

// {threshold, text_ids, induction_ids, induction_length, induction_strings, patterns: [{name, heads [L][Hq],
//  uniform_baseline, strongest: {layer, head, score}, showing: [[layer, head], ...]}]}
nlohmann::json head_patterns_to_json(const HeadPatterns& patterns);

}  // namespace anatomy
