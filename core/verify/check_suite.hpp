// The checks that hold for any implementation of the decoder, written once and
// run on any Backend (backend.hpp): the tiny model (attn verify), a checkpoint
// used in place, the GPU forward (attn verify --device cuda). Each compares two
// ways of computing the same thing, or a result against a closed-form fact.
//   a   decode one token at a time through the cache vs one full pass (logits)
//   b   prefill in chunks of 2, 3, 1, ... vs one full pass (logits)
//   c   two backends that must agree: grouped attention vs repeated K/V (check_backends_agree)
//   d   every output at positions <= t before vs after changing the tokens after t (bit for bit)
//   e1  every probability row sums to 1;  e2  row 0 of a fresh sequence is [1, 0, ...];
//   e3  every future cell is exactly 0
//   f2  what the filled cache holds vs 2 x L x Hkv x dh x tokens x batch
//   g   each sequence of a batch vs the same sequence alone (logits, probabilities)
//   h2  query heads sharing a KV head attend differently (a difference that must exist,
//       measured on at least shared_heads_rows rows of two keys or more; left out for a
//       model whose KV heads are not shared)
// A value that is not finite wherever a check looks is an infinite error, and no
// check with an infinite error passes (checks.hpp's make_check).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../non_finite.hpp"
#include "backend.hpp"
#include "checks.hpp"

namespace anatomy {

struct SuiteOptions {
    std::string id_prefix;            // put before every id and name: "" (the core), "gpu-" / "gpu_"
    std::string name_prefix;
    std::string what;                 // put before every `compares`, e.g. "GPU eager: "
    bool cache_checks = true;         // a and b (the GPU verify holds its cache to the fp64 core instead)
    // a, b: the same operations in the same order per row, so 0 is expected; 1e-5 lets a
    // compiler reorder float sums without hiding a real error (logits are O(1-10)).
    double cache_tolerance = 1e-5;
    // g: sequences never mix and every sum runs in the same order: 0 expected.
    double batch_tolerance = 1e-6;
};

// Runs a, b (unless !cache_checks), d, e1-e3, f2, g and h2 (when a KV head is shared), in that order, on `tokens`
// ([B, T], T >= 2; h2 on shared_heads_batch when it gives one). The backend's cache is reset before every
// pass. `full` receives the capture of the full pass over `tokens` that the checks compare against.
std::vector<CheckRecord> run_check_suite(Backend& backend, const TokenIds& tokens, const SuiteOptions& options = {},
                                         PassCapture* full = nullptr);

// c. Two backends over the same weights that must agree: full-pass logits and every
// probability. The grouped path and the repeated-K/V path change which memory is
// read, not the arithmetic: 0 expected, 1e-6 allowed.
CheckRecord check_backends_agree(Backend& grouped, Backend& repeated, const TokenIds& tokens);

// e1-e3 from an implementation's probabilities alone (per layer [B, Hq, T, S]). With
// attention sinks (`sinks`) a row gives part of its weight to the sink, which is no
// key: e1 then holds every row's sum inside (0, 1] (one minus the sink's share; the
// share's value is the softmax's own, tested beside it in ops), and e2 holds row 0 to
// key 0 alone (every other key exactly 0, key 0 above 0).
std::vector<CheckRecord> check_probabilities(const std::vector<Tensor4<float>>& probs, bool sinks = false);
// h2 from the probabilities alone (config.kv_group() >= 2); `input` says what they were
// computed on when it is not the suite's tokens, for the record.
CheckRecord check_shared_heads_differ(const ModelConfig& config, const std::vector<Tensor4<float>>& probs,
                                      const std::string& input = "");

// How many probability rows of two keys or more h2 compares each pair of heads on, at
// least. Row 0 is [1] in every head, and one row gives one value per pair: two heads
// that do differ come within 1e-3 of each other there by chance, and over TinyLlama's
// 616 pairs some pair usually does for two random tokens (tests/unit/test_check_suite.cpp
// counts it over 12 seeds). On 8 rows a pair would have to come that close on every one.
inline constexpr std::size_t shared_heads_rows = 8;

// h2's batch of its own when `tokens` ([B, T], T >= 2) give fewer than shared_heads_rows
// rows (B x (T - 1)): make_batch's batch of the first sequence and its variants, of as
// many sequences as that takes, [ceil(8 / (T - 1)), T]. Nothing when `tokens` give enough.
std::optional<TokenIds> shared_heads_batch(const TokenIds& tokens, int vocab_size);

// The first value of a pass that is not finite, in the order the pass computed its
// tensors ("layers.{l}.input", ".attn_norm", ".q", ... ".out", then "logits"; the
// names of docs/diff.md), over what the layers' captures hold; nothing when all are finite.
std::optional<NonFinite> first_non_finite(const std::vector<LayerCapture<float>>& layers, const Tensor3<float>& logits);

// The probabilities of a capture, per layer [B, Hq, T, S].
std::vector<Tensor4<float>> captured_probs(const PassCapture& capture);

}  // namespace anatomy
