// Known mistakes, computed on purpose. When a learner's output equals one of
// these on the same inputs, the judge can name the mistake instead of only
// reporting a mismatch. Each function is written the way a plain JavaScript
// solution with that one bug would behave (a softmax over a row with nothing
// visible gives NaN, as 0/0 does in JavaScript).
#pragma once

#include "values.hpp"

namespace anatomy::judge {

// given: the recipe's scale_value (say 1/sqrt(d) of the model width where heads are split).
enum class ScaleRule { inv_sqrt_d, none, inv_d, given };
// window_*: a sliding window of `window` keys ending at the query (wide/narrow: one
// key more/less; no_offset: measured from t instead of t + S - T; strict: the
// window shifted one key into the past, so the query misses itself).
enum class MaskRule { causal, none, strict, no_offset, window, window_wide, window_narrow, window_no_offset, window_strict };
enum class KvHeadRule { floor_group, modulo };

// One attention computation with every knob a mistake can turn. The defaults are
// the correct causal attention with the S - T offset and floor(h / group).
struct AttentionRecipe {
    ScaleRule scale = ScaleRule::inv_sqrt_d;
    double scale_value = 0;             // for ScaleRule::given
    MaskRule mask = MaskRule::causal;
    int window = 0;                     // for the window rules
    bool mask_after_softmax = false;    // zero forbidden weights after softmax, no renormalising
    bool softmax_over_queries = false;  // normalise each key column instead of each query row
    KvHeadRule kv_head = KvHeadRule::floor_group;
};

//   q [B, Hq, T, D], k, v [B, Hkv, S, D]  ->  [B, Hq, T, D]
Nd attention_recipe(const Nd& q, const Nd& k, const Nd& v, const AttentionRecipe& recipe);

// The same computation with its intermediates, for attn diff (core/diff), which
// compares a learner's scores and probabilities too.
struct AttentionSteps {
    Nd scores;  // [B, Hq, T, S]  q.k times the recipe's scale, before any mask
    Nd probs;   // [B, Hq, T, S]  the recipe's weights (masked cells 0)
    Nd out;     // [B, Hq, T, D]
};
AttentionSteps attention_recipe_steps(const Nd& q, const Nd& k, const Nd& v, const AttentionRecipe& recipe);

// Online softmax that forgets to rescale the running sum and accumulator when the max grows.
Nd online_attention_without_rescale(const Nd& q, const Nd& k, const Nd& v, int block_size);

// softmax exercise: exp without subtracting the row max (overflows), or over columns.
Nd softmax_without_max(const Nd& x);
Nd softmax_over_columns(const Nd& x);

// softmax with a sink: the sink's term added to every numerator, the sink left out of
// the row's maximum (a row with every key masked: exp(sink + Infinity) / Infinity is NaN),
// or the sink's own column returned beside the keys' ([R, C + 1]).
Nd softmax_sink_ignored(const Nd& x);  // a plain softmax, as written by hand: a row of -Infinity is NaN
Nd softmax_sink_in_numerator(const Nd& x, double sink);
Nd softmax_sink_outside_max(const Nd& x, double sink);
Nd softmax_sink_column_returned(const Nd& x, double sink);

// Multi-head attention with the heads split or merged by a bare reshape (no transpose).
enum class HeadLayout { transpose, reshape_only };
//   y [B, T, H*dh]  ->  [B, H, T, dh]; and back
Nd split_heads_recipe(const Nd& y, std::size_t n_heads, HeadLayout layout);
Nd merge_heads_recipe(const Nd& heads, HeadLayout layout);
// A projection as a learner writes it: x [B, T, in] @ w [in, out]  ->  [B, T, out].
// Given a weight stored [out, in] (a checkpoint's layout) it is the "weights used
// [in, out]" mistake when out == in.
Nd projection_recipe(const Nd& x, const Nd& w);
Nd mha_recipe(const Nd& x, const Nd& wq, const Nd& wk, const Nd& wv, const Nd& wo, int n_heads,
              const AttentionRecipe& recipe, HeadLayout split, HeadLayout merge);

enum class RmsMistake { mean_subtracted, eps_outside_sqrt, weight_ignored };
Nd rmsnorm_mistake(const Nd& x, const Nd& weight, double eps, RmsMistake mistake);

// interleaved_pairs: (2i, 2i+1) where the half-split pairing (i, i + D/2) is right;
// half_split_pairs: the reverse mistake, for a model that pairs adjacent channels.
enum class RopeMistake { interleaved_pairs, half_split_pairs, wrong_sign, exponent_without_two };
Nd rope_mistake(const Nd& x, const Nd& positions, double theta, RopeMistake mistake);

enum class SwigluMistake { gate_and_up_swapped, sigmoid_gate, relu_gate };
Nd swiglu_mistake(const Nd& x, const Nd& w_gate, const Nd& w_up, const Nd& w_down, SwigluMistake mistake);

}  // namespace anatomy::judge
