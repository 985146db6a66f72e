// attn diff: a learner's intermediate tensors against the core's forward pass on
// the same weights and tokens, compared in data-flow order, with the first
// operation that diverges located (layer, head, position, index) and, where the
// divergence is what a known mistake gives on the same inputs, that mistake named.
//
// The names and layouts (B sequences, T tokens, S keys, D width, dh head size,
// V vocabulary), in the order they are compared (docs/diff.md has the table):
//   embed [B,T,D]
//   layers.{l}.attn_norm [B,T,D]; .q [B,Hq,T,dh]; .k, .v [B,Hkv,T,dh] (before RoPE);
//     .q_rope, .k_rope; .scores [B,Hq,T,S] (scaled, before the mask; masked cells are
//     not compared); .probs [B,Hq,T,S]; .heads [B,Hq,T,dh]; .attn_out [B,T,D] (after
//     W_O, before the residual); .resid_mid; .ffn_norm; .ffn_out; .out [B,T,D]
//   final_norm [B,T,D]; logits [B,T,V]
//
// With `cached` = N, the first N tokens of each sequence go through the KV cache
// first, and the learner's tensors describe the pass over the rest: T = (tokens) - N
// queries over S = N + T keys, masked cells those with a key after N + the query's row.
// That pass shows two more mistakes: positions restarting at 0 after the cache, and a
// causal mask not shifted by N.
//
// The core's side runs in float64 (the model cast from its weights). Each tensor is
// held to |theirs - ours| <= atol + rtol |ours| with a tolerance set by the
// precision of the learner's array (diff_tolerance). The mistakes are the judge's
// (core/judge/mistakes.hpp), computed on the core's inputs of the diverging operation,
// which agree with the learner's: every tensor compared before it did.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "../model/weights.hpp"
#include "learner_file.hpp"

namespace anatomy {

struct DiffTolerance {
    double atol = 0, rtol = 0;
};

// float32: atol 1e-5, rtol 1e-4; float64: atol 1e-10, rtol 1e-8 (docs/diff.md says why).
DiffTolerance diff_tolerance(bool float64);

// The report (tokens: [B, T]; theirs: name -> tensor):
//   {agrees, compared: [{name, shape, precision, tolerance, max_abs_error,
//    max_rel_error, mismatches, agrees}], not_given: [names],
//    first_divergence: null | {tensor, layer, axes, index, ours, theirs, ...},
//    diagnosis: null | {mistake, description}, mistakes_tried: [names]}
// A value that is not finite on either side never agrees: the tensor's errors are
// then infinite (null in JSON), and ours and theirs are "nan", "inf" or "-inf" where
// the value is one (JSON has no such numbers).
// Throws InputError for a name not in the table, a layer the model lacks, a shape
// other than the one the name has for these tokens (expected and given), no
// tensors at all, tokens outside the vocabulary, or a `cached` that leaves no token.
//   tokens: [B, S], all of them, cached and new
// with_block: the first divergence also carries block: {theirs, ours}, the [T, X]
// slice holding it (its sequence, and its head where the tensor has heads), for a
// page to draw side by side; the command line leaves it out.
nlohmann::json diff_report(const Model<float>& model, const TokenIds& tokens,
                           const std::map<std::string, LearnerTensor>& theirs, std::size_t cached = 0,
                           bool with_block = false);

}  // namespace anatomy
