// Every eviction policy's run over one text, summarised as `attn stream` prints it and
// the page's StreamingLLM widget draws it: for each policy the loss of every position,
// the mean over the positions after the first eviction, and the first position where
// it departs from the reference (recomputing each prediction from the last W tokens).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../tokenizer/llama_tokenizer.hpp"
#include "stream_losses.hpp"

namespace anatomy {

// A policy's loss must differ from the reference's by more than this, in nats, to depart from it.
inline constexpr double stream_departure_nats = 0.01;

struct PolicyReport {
    std::string policy;  // keep_all, sliding_window, sinks_and_window, recompute_window (the reference)
    StreamRun run;
    double mean_loss_after_first_eviction = 0;  // over losses[W ..]
    double mean_loss = 0;                       // over every loss
    std::int64_t departs_at = -1;  // the first t with |losses[t] - reference[t]| > stream_departure_nats; -1: never
};

struct StreamReport {
    std::size_t tokens = 0, window = 0, sinks = 0;
    // The first eviction comes when token W is read, so losses[W] (predicting token W + 1)
    // is the first that any windowed policy computes from a cache that lost an entry.
    std::size_t first_eviction_at = 0;
    std::vector<PolicyReport> policies;  // keep_all, sliding_window, sinks_and_window, then the reference
};

// Throws InputError unless `tokens` (BOS included) pass a window of `window` entries by
// two, so that a windowed policy evicts something: stream_report's check, which attn
// stream (prefixing its flags) shows before it decodes anything.
void require_tokens_past_window(std::size_t tokens, std::size_t window);

// The three policies through a cache of at most `window` entries (sinks_and_window keeping
// the first `sinks`), then the reference, each followed by `generate` greedy tokens.
// ids: [N], BOS first. Throws InputError for sinks >= window, or N <= window + 1 (nothing
// would be evicted before the last prediction). Without `with_reference` the report holds
// the three policies alone (departs_at -1), and add_reference completes it later: the
// reference costs several times one policy (a pass over up to W tokens for every
// prediction), so the page draws the three policies before it has the reference.
template <typename Real>
StreamReport stream_report(const Model<Real>& model, const std::vector<std::int32_t>& ids, std::size_t window,
                           std::size_t sinks, std::size_t generate = 0, bool with_reference = true);

// Appends the reference (recompute_window) to a report of the three policies on the same
// ids and sets where each departs from it. Throws InputError for other ids, or a report
// that has its reference already.
template <typename Real>
void add_reference(StreamReport& report, const Model<Real>& model, const std::vector<std::int32_t>& ids,
                   std::size_t generate = 0);

// Appends a reference computed elsewhere: stream_recomputed's run, or recomputed_losses'
// parts joined in order with recomputed_continuation (the page shares them out among its
// workers). Throws InputError for a report that has its reference already, or a run of
// another length than the report's.
void add_reference(StreamReport& report, StreamRun reference);

// Whether the report's last policy is the reference.
bool has_reference(const StreamReport& report);

// How many tokens each policy's run reads through its cache: the text's, then every
// generated one but the last (nothing is predicted after it). keep_all gives them the
// positions 0 to tokens_read - 1; a windowed policy none past window - 1.
std::size_t tokens_read(const StreamReport& report);

// {tokens, window, sinks, first_eviction_at, departure_nats, policies: [{policy,
//  mean_loss_after_first_eviction, mean_loss, losses, departs_from_reference_at (not the
//  reference's, and only when the report has one; null: never), continuation: {ids, text}
//  (when generated)}]}
nlohmann::json stream_report_json(const StreamReport& report, const LlamaTokenizer& tokenizer);

}  // namespace anatomy
