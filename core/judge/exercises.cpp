#include "exercises.hpp"

#include <cmath>
#include <limits>

#include "../model/random.hpp"
#include "../tensor.hpp"
#include "mistakes.hpp"
#include "reference.hpp"

namespace anatomy::judge {
namespace {

// ---------------------------------------------------------------- inputs

Nd random_nd(SplitMix64& rng, std::vector<std::size_t> shape, double scale = 1.0) {
    Nd x(shape);
    for (double& value : x) value = scale * rng.normal();
    return x;
}

Nd arg(const json& args, std::size_t i, const char* what) { return nd_from_json(args.at(i), what); }

// The seed of an exercise's cases: a hash of its name, so adding an exercise changes no other.
std::uint64_t seed_of(const std::string& id) {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (char c : id) h = (h ^ std::uint8_t(c)) * 1099511628211ULL;
    return h;
}

// A q, k, v triple: q [B, Hq, T, D], k and v [B, Hkv, S, D].
json qkv(SplitMix64& rng, std::size_t B, std::size_t Hq, std::size_t Hkv, std::size_t T, std::size_t S, std::size_t D,
         double scale = 1.0) {
    return json::array({nd_to_json(random_nd(rng, {B, Hq, T, D}, scale)), nd_to_json(random_nd(rng, {B, Hkv, S, D}, scale)),
                        nd_to_json(random_nd(rng, {B, Hkv, S, D}, scale))});
}

json with(json args, const json& extra) {
    args.push_back(extra);
    return args;
}

// ---------------------------------------------------------------- shared mistakes

AttentionRecipe recipe_with(void (*tweak)(AttentionRecipe&)) {
    AttentionRecipe r;
    tweak(r);
    return r;
}

// Mistakes every causal attention exercise can make; `run` computes the exercise with a recipe.
// `head_size` is the exercise's own name for the head size (D, or dh where d is the model width).
std::vector<Mistake> attention_mistakes(std::function<json(const json&, const AttentionRecipe&)> run, bool with_offset = true,
                                        const std::string& head_size = "D") {
    auto make = [run](std::string id, std::string title, std::string explanation, void (*tweak)(AttentionRecipe&)) {
        return Mistake{std::move(id), std::move(title), std::move(explanation),
                       [run, tweak](const json& args) { return run(args, recipe_with(tweak)); }};
    };
    std::vector<Mistake> list = {
        make("mask_after_softmax", "Mask applied after softmax",
             "Forbidden weights were zeroed after the softmax, so the remaining weights no longer sum to 1. Add -Infinity to the "
             "forbidden scores before the softmax instead.",
             [](AttentionRecipe& r) { r.mask_after_softmax = true; }),
        make("softmax_wrong_axis", "Softmax over the wrong axis",
             "The softmax normalised each key column over the queries. It must run along each query's row, over the keys "
             "(the last axis).",
             [](AttentionRecipe& r) { r.softmax_over_queries = true; }),
        make("missing_scale", "Missing 1/sqrt(" + head_size + ")",
             "The scores were not divided by sqrt(" + head_size + "), the head size, so the softmax is too sharp.",
             [](AttentionRecipe& r) { r.scale = ScaleRule::none; }),
        make("scaled_by_d", "Scaled by 1/" + head_size + " instead of 1/sqrt(" + head_size + ")",
             "The scores were divided by " + head_size + ". Divide by sqrt(" + head_size + "), the square root of the head size.",
             [](AttentionRecipe& r) { r.scale = ScaleRule::inv_d; }),
        make("strict_mask", "Strict mask: a position cannot see itself",
             "The mask hid the diagonal too. A query may read its own key: allow s <= t (plus the cache offset), not s < t.",
             [](AttentionRecipe& r) { r.mask = MaskRule::strict; }),
        make("no_mask", "No causal mask", "Every query read every key, future ones included. Mask keys after the query's position.",
             [](AttentionRecipe& r) { r.mask = MaskRule::none; }),
    };
    if (with_offset)
        list.push_back(make("offset_ignored", "Cache offset ignored",
                            "With S keys and T < S queries the queries are the last T positions: query t may read keys up to "
                            "t + (S - T). The mask used s <= t, as if there were no cache.",
                            [](AttentionRecipe& r) { r.mask = MaskRule::no_offset; }));
    return list;
}

// ---------------------------------------------------------------- the exercises

Exercise softmax_exercise() {
    SplitMix64 rng(seed_of("softmax"));
    Exercise e{"softmax", {}, [](const json& a) { return nd_to_json(softmax_reference(arg(a, 0, "x"))); }, {}};
    e.cases.push_back({"3 rows of 5", json::array({nd_to_json(random_nd(rng, {3, 5}))})});
    Nd big = random_nd(rng, {2, 6}, 3.0) + 1000.0;
    big(1, 2) = -std::numeric_limits<double>::infinity();
    e.cases.push_back({"large values (around 1000) and a -Infinity entry", json::array({nd_to_json(big)})});
    Nd wide = random_nd(rng, {4, 7}, 40.0);
    wide(0, 0) = -std::numeric_limits<double>::infinity();
    wide(3, 6) = -std::numeric_limits<double>::infinity();
    e.cases.push_back({"4 rows of 7 with a wide spread", json::array({nd_to_json(wide)})});
    e.cases.push_back({"a single value", json::array({json::array({json::array({2.5})})})});
    e.mistakes = {
        {"softmax_unstable", "No max subtraction",
         "exp of large scores overflows to Infinity and Infinity / Infinity is NaN. Subtract each row's maximum before exp; the "
         "result is the same in exact arithmetic.",
         [](const json& a) { return nd_to_json(softmax_without_max(arg(a, 0, "x"))); }},
        {"softmax_wrong_axis", "Softmax over the wrong axis",
         "Each column was normalised instead of each row. Sum over the last axis (along a row).",
         [](const json& a) { return nd_to_json(softmax_over_columns(arg(a, 0, "x"))); }},
    };
    return e;
}

Exercise softmax_with_sink_exercise() {
    SplitMix64 rng(seed_of("softmaxWithSink"));
    const auto sink_of = [](const json& a) {
        if (!a.at(1).is_number()) throw InputError("sink must be a number");
        return a.at(1).get<double>();
    };
    Exercise e{"softmaxWithSink", {}, [=](const json& a) { return nd_to_json(softmax_with_sink_reference(arg(a, 0, "x"), sink_of(a))); }, {}};
    const double inf = std::numeric_limits<double>::infinity();
    e.cases.push_back({"3 rows of 5, sink 0.5", json::array({nd_to_json(random_nd(rng, {3, 5})), 0.5})});
    Nd big = random_nd(rng, {2, 6}, 3.0) + 1000.0;
    big(1, 2) = -inf;
    e.cases.push_back({"scores around 1000 and a -Infinity entry, sink 1001", json::array({nd_to_json(big), 1001.0})});
    e.cases.push_back({"a sink far above the scores (30): the keys keep little", json::array({nd_to_json(random_nd(rng, {2, 4})), 30.0})});
    Nd masked = random_nd(rng, {2, 4});
    for (std::size_t c = 0; c < 4; ++c) masked(1, c) = -inf;
    e.cases.push_back({"a row with every key masked (-Infinity): the sink takes it all", json::array({nd_to_json(masked), -0.25})});
    e.cases.push_back({"a sink far below the scores (-30): almost a plain softmax", json::array({nd_to_json(random_nd(rng, {3, 3}, 2.0)), -30.0})});
    e.mistakes = {
        {"sink_ignored", "The sink left out",
         "The weights are a plain softmax of the row: the sink's exp(sink) is missing from the denominator, so each row sums to "
         "1. Add exp(sink) to the sum; the sink takes the rest.",
         [](const json& a) { return nd_to_json(softmax_sink_ignored(arg(a, 0, "x"))); }},
        {"sink_in_numerator", "The sink added to every weight",
         "exp(sink) was added to each key's numerator as well as to the denominator. The sink is one more column with no value: "
         "it belongs in the sum only, and no key gets its share.",
         [=](const json& a) { return nd_to_json(softmax_sink_in_numerator(arg(a, 0, "x"), sink_of(a))); }},
        {"sink_outside_max", "The sink left out of the maximum",
         "The maximum subtracted before exp was the keys' alone. When every key is -Infinity that maximum is -Infinity, and "
         "exp(sink + Infinity) is Infinity, so the row becomes NaN; with a sink far above the keys, exp overflows. Take the "
         "maximum over the keys and the sink.",
         [=](const json& a) { return nd_to_json(softmax_sink_outside_max(arg(a, 0, "x"), sink_of(a))); }},
        {"sink_column_returned", "The sink's column returned as a weight",
         "The result holds C + 1 columns, the last being the sink's share. The sink has no value to mix: return the C keys' "
         "weights only (they sum to one minus the sink's share).",
         [=](const json& a) { return nd_to_json(softmax_sink_column_returned(arg(a, 0, "x"), sink_of(a))); }},
    };
    return e;
}

Exercise attention_exercise() {
    SplitMix64 rng(seed_of("attention"));
    Exercise e{"attention", {}, [](const json& a) {
                   return nd_to_json(attention_reference(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), a.at(3).get<bool>()));
               }, {}};
    e.cases.push_back({"causal, B = 2, H = 3, T = S = 5, D = 4", with(qkv(rng, 2, 3, 3, 5, 5, 4), true)});
    e.cases.push_back({"causal with a cache offset: T = 3 queries, S = 7 keys, D = 6", with(qkv(rng, 1, 2, 2, 3, 7, 6), true)});
    e.cases.push_back({"decode: T = 1 query over S = 6 keys", with(qkv(rng, 2, 1, 1, 1, 6, 5), true)});
    e.cases.push_back({"not causal: T = 4, S = 6, D = 3", with(qkv(rng, 1, 2, 2, 4, 6, 3), false)});
    e.cases.push_back({"large scores (inputs scaled by 30)", with(qkv(rng, 1, 1, 1, 4, 4, 8, 30.0), true)});
    e.mistakes = attention_mistakes([](const json& a, const AttentionRecipe& recipe) {
        AttentionRecipe r = recipe;
        if (!a.at(3).get<bool>()) r.mask = MaskRule::none;  // not causal: no mask to get wrong
        return nd_to_json(attention_recipe(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), r));
    });
    return e;
}

Exercise mha_exercise() {
    SplitMix64 rng(seed_of("causalMultiHeadAttention"));
    auto make_case = [&](std::string name, std::size_t B, std::size_t T, std::size_t d, int heads) {
        const double w = 1.0 / std::sqrt(double(d));
        return JudgeCase{std::move(name),
                         json::array({nd_to_json(random_nd(rng, {B, T, d})), nd_to_json(random_nd(rng, {d, d}, w)),
                                      nd_to_json(random_nd(rng, {d, d}, w)), nd_to_json(random_nd(rng, {d, d}, w)),
                                      nd_to_json(random_nd(rng, {d, d}, w)), heads})};
    };
    auto run = [](const json& a, const AttentionRecipe& r, HeadLayout split, HeadLayout merge) {
        return nd_to_json(mha_recipe(arg(a, 0, "x"), arg(a, 1, "wq"), arg(a, 2, "wk"), arg(a, 3, "wv"), arg(a, 4, "wo"),
                                     a.at(5).get<int>(), r, split, merge));
    };
    Exercise e{"causalMultiHeadAttention", {}, [](const json& a) {
                   return nd_to_json(causal_mha_reference(arg(a, 0, "x"), arg(a, 1, "wq"), arg(a, 2, "wk"), arg(a, 3, "wv"),
                                                          arg(a, 4, "wo"), a.at(5).get<int>()));
               }, {}};
    e.cases.push_back(make_case("B = 2, T = 5, d = 12, 3 heads", 2, 5, 12, 3));
    e.cases.push_back(make_case("B = 1, T = 7, d = 10, 2 heads", 1, 7, 10, 2));
    e.cases.push_back(make_case("a single token: T = 1, d = 6, 3 heads", 1, 1, 6, 3));
    e.mistakes = attention_mistakes(
        [run](const json& a, const AttentionRecipe& r) { return run(a, r, HeadLayout::transpose, HeadLayout::transpose); },
        false, "dh");
    e.mistakes.push_back({"scaled_by_sqrt_d", "Scaled by 1/sqrt(d), the model width, instead of 1/sqrt(dh)",
                          "The scores were divided by sqrt(d), the width of the whole layer. Inside a head they are divided by "
                          "sqrt(dh), the head size: dh = d / nHeads.",
                          [run](const json& a) {
                              AttentionRecipe r;
                              r.scale = ScaleRule::given;
                              r.scale_value = 1.0 / std::sqrt(double(arg(a, 0, "x").shape(2)));
                              return run(a, r, HeadLayout::transpose, HeadLayout::transpose);
                          }});
    e.mistakes.push_back({"heads_merged_wrong_order", "Heads merged in the wrong order",
                          "The [B, H, T, dh] head outputs were reshaped straight to [B, T, H*dh]. Move the head axis back "
                          "behind the positions first (transpose to [B, T, H, dh]), then reshape.",
                          [run](const json& a) { return run(a, AttentionRecipe{}, HeadLayout::transpose, HeadLayout::reshape_only); }});
    e.mistakes.push_back({"heads_split_without_transpose", "Heads split without a transpose",
                          "The [B, T, d] projections were reshaped straight to [B, H, T, dh], which mixes positions into "
                          "heads. Reshape to [B, T, H, dh], then transpose to [B, H, T, dh].",
                          [run](const json& a) { return run(a, AttentionRecipe{}, HeadLayout::reshape_only, HeadLayout::reshape_only); }});
    return e;
}

Exercise sliding_window_exercise() {
    SplitMix64 rng(seed_of("slidingWindowAttention"));
    auto run = [](const json& a, AttentionRecipe r) {
        r.window = a.at(3).get<int>();
        return nd_to_json(attention_recipe(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), r));
    };
    Exercise e{"slidingWindowAttention", {}, [](const json& a) {
                   return nd_to_json(sliding_window_reference(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), a.at(3).get<int>()));
               }, {}};
    e.cases.push_back({"B = 2, T = S = 6, window 3", with(qkv(rng, 2, 2, 2, 6, 6, 3), 3)});
    e.cases.push_back({"cache offset: T = 4, S = 9, window 2", with(qkv(rng, 1, 1, 1, 4, 9, 4), 2)});
    e.cases.push_back({"decode: T = 1, S = 7, window 4", with(qkv(rng, 1, 2, 2, 1, 7, 3), 4)});
    e.cases.push_back({"window 1: each query sees only itself", with(qkv(rng, 1, 1, 1, 5, 5, 2), 1)});
    e.cases.push_back({"a window longer than the sequence is plain causal attention", with(qkv(rng, 1, 1, 1, 5, 5, 2), 100)});
    // Every sliding-window mistake is a different visibility rule.
    const auto window_rule = [run](MaskRule rule) {
        return [run, rule](const json& a) {
            AttentionRecipe r;
            r.mask = rule;
            return run(a, r);
        };
    };
    e.mistakes = {
        {"window_off_by_one_wide", "Sliding window off by one (one key too many)",
         "Each query saw window + 1 keys. With window w, query position p reads keys p - w + 1 to p: w keys, itself included.",
         window_rule(MaskRule::window_wide)},
        {"window_off_by_one_narrow", "Sliding window off by one (one key too few)",
         "Each query saw window - 1 keys. With window w, query position p reads keys p - w + 1 to p: w keys, itself included.",
         window_rule(MaskRule::window_narrow)},
        {"window_ignored", "Window ignored (plain causal attention)",
         "Every earlier key was visible. Also hide keys more than window - 1 positions before the query.",
         window_rule(MaskRule::causal)},
        {"offset_ignored", "Cache offset ignored",
         "The queries are the last T of S positions, at absolute positions S - T to S - 1; measure the window back from "
         "there, not from t.",
         window_rule(MaskRule::window_no_offset)},
        {"strict_mask", "Strict mask: a position cannot see itself",
         "The window excluded the query's own key. A query reads itself and the window - 1 keys before it.",
         window_rule(MaskRule::window_strict)},
    };
    return e;
}

Exercise rmsnorm_exercise() {
    SplitMix64 rng(seed_of("rmsnorm"));
    Exercise e{"rmsnorm", {}, [](const json& a) {
                   return nd_to_json(rmsnorm_reference(arg(a, 0, "x"), arg(a, 1, "weight"), a.at(2).get<double>()));
               }, {}};
    auto weight = [&](std::size_t d) { return nd_to_json(random_nd(rng, {d}, 0.3) + 1.0); };
    e.cases.push_back({"B = 2, T = 3, d = 6, eps = 1e-6", json::array({nd_to_json(random_nd(rng, {2, 3, 6})), weight(6), 1e-6})});
    e.cases.push_back({"inputs with a large mean, eps = 0.5", json::array({nd_to_json(random_nd(rng, {1, 4, 5}) + 3.0), weight(5), 0.5})});
    e.cases.push_back({"large values, d = 7", json::array({nd_to_json(random_nd(rng, {1, 1, 7}, 1000.0)), weight(7), 1e-5})});
    auto mistake = [](RmsMistake m) {
        return [m](const json& a) { return nd_to_json(rmsnorm_mistake(arg(a, 0, "x"), arg(a, 1, "weight"), a.at(2).get<double>(), m)); };
    };
    e.mistakes = {
        {"rms_mean_subtracted", "Mean subtracted in RMSNorm",
         "That is LayerNorm. RMSNorm divides x by sqrt(mean(x^2) + eps) without centring it first.", mistake(RmsMistake::mean_subtracted)},
        {"rms_eps_outside_sqrt", "eps outside the square root",
         "The code divided by sqrt(mean(x^2)) + eps. eps belongs inside: sqrt(mean(x^2) + eps).", mistake(RmsMistake::eps_outside_sqrt)},
        {"rms_weight_ignored", "Learned scale ignored", "Multiply the normalised vector by weight, channel by channel.",
         mistake(RmsMistake::weight_ignored)},
    };
    return e;
}

Exercise rope_exercise() {
    SplitMix64 rng(seed_of("rope"));
    Exercise e{"rope", {}, [](const json& a) {
                   return nd_to_json(rope_reference(arg(a, 0, "x"), arg(a, 1, "positions"), a.at(2).get<double>()));
               }, {}};
    e.cases.push_back({"B = 2, H = 2, positions 0, 1, 2, D = 8",
                       json::array({nd_to_json(random_nd(rng, {2, 2, 3, 8})), json::array({0, 1, 2}), 10000.0})});
    e.cases.push_back({"positions 5 to 8 after a cache, D = 6, theta = 500",
                       json::array({nd_to_json(random_nd(rng, {1, 3, 4, 6})), json::array({5, 6, 7, 8}), 500.0})});
    e.cases.push_back({"one token at position 1000, D = 4",
                       json::array({nd_to_json(random_nd(rng, {1, 1, 1, 4})), json::array({1000}), 10000.0})});
    auto mistake = [](RopeMistake m) {
        return [m](const json& a) { return nd_to_json(rope_mistake(arg(a, 0, "x"), arg(a, 1, "positions"), a.at(2).get<double>(), m)); };
    };
    e.mistakes = {
        {"rope_interleaved", "Interleaved RoPE pairing",
         "Channels 2i and 2i + 1 were rotated together. This exercise uses the half-split pairing: channel i with i + D/2.",
         mistake(RopeMistake::interleaved_pairs)},
        {"rope_wrong_sign", "Rotation with the wrong sign",
         "The rotation went the other way. For a pair (a, b): (a cos - b sin, a sin + b cos).", mistake(RopeMistake::wrong_sign)},
        {"rope_frequency_exponent", "Frequencies theta^(-i/D) instead of theta^(-2i/D)",
         "Pair i turns at theta^(-2i/D) radians per position; the factor 2 was missing.", mistake(RopeMistake::exponent_without_two)},
    };
    return e;
}

Exercise gqa_exercise() {
    SplitMix64 rng(seed_of("groupedQueryAttention"));
    auto run = [](const json& a, const AttentionRecipe& r) {
        return nd_to_json(attention_recipe(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), r));
    };
    Exercise e{"groupedQueryAttention", {}, [](const json& a) {
                   return nd_to_json(attention_reference(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), true));
               }, {}};
    e.cases.push_back({"Hq = 4, Hkv = 2, T = S = 5", qkv(rng, 2, 4, 2, 5, 5, 3)});
    e.cases.push_back({"Hq = 6, Hkv = 2 (groups of 3), T = 3, S = 7", qkv(rng, 1, 6, 2, 3, 7, 4)});
    e.cases.push_back({"multi-query decode: Hq = 4, Hkv = 1, T = 1, S = 5", qkv(rng, 1, 4, 1, 1, 5, 2)});
    e.cases.push_back({"Hq = 6, Hkv = 3, T = S = 4", qkv(rng, 2, 6, 3, 4, 4, 5)});
    e.mistakes = attention_mistakes(run);
    e.mistakes.push_back({"kv_head_modulo", "KV head h mod Hkv instead of floor(h / group)",
                          "Query heads were assigned to KV heads round-robin. Consecutive query heads share a KV head: query "
                          "head h reads KV head floor(h / (Hq / Hkv)).",
                          [run](const json& a) {
                              AttentionRecipe r;
                              r.kv_head = KvHeadRule::modulo;
                              return run(a, r);
                          }});
    return e;
}

Exercise decode_step_exercise() {
    SplitMix64 rng(seed_of("decodeStep"));
    auto make_case = [&](std::string name, std::size_t B, std::size_t H, std::size_t S, std::size_t D) {
        return JudgeCase{std::move(name),
                         json::array({nd_to_json(random_nd(rng, {B, H, 1, D})), nd_to_json(random_nd(rng, {B, H, S, D})),
                                      nd_to_json(random_nd(rng, {B, H, S, D})), nd_to_json(random_nd(rng, {B, H, 1, D})),
                                      nd_to_json(random_nd(rng, {B, H, 1, D}))})};
    };
    auto reference = [](const json& a) {
        return decode_step_reference(arg(a, 0, "q"), arg(a, 1, "kCache"), arg(a, 2, "vCache"), arg(a, 3, "kNew"), arg(a, 4, "vNew"));
    };
    Exercise e{"decodeStep", {}, reference, {}};
    e.cases.push_back(make_case("B = 2, H = 2, 5 cached tokens, D = 4", 2, 2, 5, 4));
    e.cases.push_back(make_case("one cached token, H = 3, D = 3", 1, 3, 1, 3));
    e.cases.push_back(make_case("9 cached tokens, D = 5", 1, 1, 9, 5));
    e.mistakes = {
        {"decode_excludes_new_token", "The new token does not attend to itself",
         "The new query read only the cached keys. Append the new key and value first, then attend over all S + 1.",
         [reference](const json& a) {
             json out = reference(a);
             out["out"] = nd_to_json(attention_reference(arg(a, 0, "q"), arg(a, 1, "kCache"), arg(a, 2, "vCache"), false));
             return out;
         }},
        {"decode_cache_not_extended", "Caches returned without the new token",
         "Return kCache and vCache with the new key and value appended along the sequence axis: [B, H, S + 1, D].",
         [reference](const json& a) {
             json out = reference(a);
             out["kCache"] = a.at(1);
             out["vCache"] = a.at(2);
             return out;
         }},
        {"missing_scale", "Missing 1/sqrt(D)", "The scores were not divided by sqrt(D).",
         [reference](const json& a) {
             json out = reference(a);
             AttentionRecipe r;
             r.scale = ScaleRule::none;
             out["out"] = nd_to_json(attention_recipe(arg(a, 0, "q"), nd_from_json(out["kCache"], "k"), nd_from_json(out["vCache"], "v"), r));
             return out;
         }},
    };
    return e;
}

Exercise swiglu_exercise() {
    SplitMix64 rng(seed_of("swiglu"));
    auto make_case = [&](std::string name, std::size_t B, std::size_t T, std::size_t d, std::size_t F) {
        return JudgeCase{std::move(name),
                         json::array({nd_to_json(random_nd(rng, {B, T, d})), nd_to_json(random_nd(rng, {d, F}, 1.0 / std::sqrt(double(d)))),
                                      nd_to_json(random_nd(rng, {d, F}, 1.0 / std::sqrt(double(d)))),
                                      nd_to_json(random_nd(rng, {F, d}, 1.0 / std::sqrt(double(F))))})};
    };
    Exercise e{"swiglu", {}, [](const json& a) {
                   return nd_to_json(swiglu_reference(arg(a, 0, "x"), arg(a, 1, "wGate"), arg(a, 2, "wUp"), arg(a, 3, "wDown")));
               }, {}};
    e.cases.push_back(make_case("B = 2, T = 3, d = 4, F = 6", 2, 3, 4, 6));
    e.cases.push_back(make_case("B = 1, T = 5, d = 3, F = 7", 1, 5, 3, 7));
    auto mistake = [](SwigluMistake m) {
        return [m](const json& a) {
            return nd_to_json(swiglu_mistake(arg(a, 0, "x"), arg(a, 1, "wGate"), arg(a, 2, "wUp"), arg(a, 3, "wDown"), m));
        };
    };
    e.mistakes = {
        {"swiglu_gate_up_swapped", "Gate and up projections swapped",
         "silu was applied to x @ wUp. The gate is silu(x @ wGate); it multiplies x @ wUp.", mistake(SwigluMistake::gate_and_up_swapped)},
        {"swiglu_sigmoid_gate", "sigmoid instead of silu",
         "silu(a) is a * sigmoid(a), not sigmoid(a) alone.", mistake(SwigluMistake::sigmoid_gate)},
        {"swiglu_relu_gate", "ReLU instead of silu", "SwiGLU gates with silu(a) = a / (1 + exp(-a)), not max(0, a).",
         mistake(SwigluMistake::relu_gate)},
    };
    return e;
}

Exercise online_softmax_exercise() {
    SplitMix64 rng(seed_of("onlineSoftmaxAttention"));
    auto run = [](const json& a, const AttentionRecipe& r) {
        return nd_to_json(attention_recipe(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), r));
    };
    Exercise e{"onlineSoftmaxAttention", {}, [](const json& a) {
                   return nd_to_json(attention_reference(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), true));
               }, {}};
    e.cases.push_back({"T = S = 7 in blocks of 3 (a partial last block)", with(qkv(rng, 1, 2, 2, 7, 7, 3), 3)});
    e.cases.push_back({"cache offset: T = 5, S = 9, blocks of 4", with(qkv(rng, 2, 1, 1, 5, 9, 4), 4)});
    e.cases.push_back({"decode: T = 1, S = 6, blocks of 2", with(qkv(rng, 1, 1, 1, 1, 6, 2), 2)});
    e.cases.push_back({"large scores (inputs scaled by 40), blocks of 5", with(qkv(rng, 1, 1, 1, 6, 6, 4, 40.0), 5)});
    e.mistakes = {
        {"online_no_rescale", "Running sum not rescaled when the maximum grows",
         "When a block raises the running max from m to m', the sum and the accumulator computed with exp(s - m) must be "
         "multiplied by exp(m - m') before the new block is added.",
         [](const json& a) {
             return nd_to_json(online_attention_without_rescale(arg(a, 0, "q"), arg(a, 1, "k"), arg(a, 2, "v"), a.at(3).get<int>()));
         }},
    };
    for (Mistake& m : attention_mistakes(run))
        if (m.id == "missing_scale" || m.id == "no_mask" || m.id == "offset_ignored" || m.id == "strict_mask") e.mistakes.push_back(m);
    return e;
}

Exercise flops_exercise() {
    Exercise e{"attentionFlops", {}, [](const json& a) { return attention_flops_reference(a.at(0).get<double>(), a.at(1).get<double>()); }, {}};
    e.cases.push_back({"d = T = 4096 (the chapter's example)", json::array({4096, 4096})});
    e.cases.push_back({"d = 64, T = 1000", json::array({64, 1000})});
    e.cases.push_back({"d = 2048, T = 3", json::array({2048, 3})});
    e.mistakes = {
        {"flops_counted_macs", "Multiply-adds counted as one operation",
         "A multiply-add is two floating-point operations: an m x k by k x n product costs 2mkn.",
         [](const json& a) {
             const double d = a.at(0).get<double>(), T = a.at(1).get<double>();
             return json{{"projections", 4 * T * d * d}, {"scores", T * T * d}, {"weighted", T * T * d}};
         }},
        {"flops_three_projections", "Output projection left out",
         "There are four projections per layer: Q, K, V and the output projection O, each 2Td^2.",
         [](const json& a) {
             const double d = a.at(0).get<double>(), T = a.at(1).get<double>();
             return json{{"projections", 6 * T * d * d}, {"scores", 2 * T * T * d}, {"weighted", 2 * T * T * d}};
         }},
    };
    return e;
}

}  // namespace

const std::vector<Exercise>& exercises() {
    static const std::vector<Exercise> all = {
        softmax_exercise(),       softmax_with_sink_exercise(), attention_exercise(),   mha_exercise(),
        sliding_window_exercise(), rmsnorm_exercise(),    rope_exercise(),
        gqa_exercise(),           decode_step_exercise(), swiglu_exercise(),
        online_softmax_exercise(), flops_exercise(),
    };
    return all;
}

const Exercise& find_exercise(const std::string& id) {
    for (const Exercise& e : exercises())
        if (e.id == id) return e;
    std::string known;
    for (const Exercise& e : exercises()) known += (known.empty() ? "" : ", ") + e.id;
    throw InputError("unknown exercise '" + id + "' (known: " + known + ")");
}

}  // namespace anatomy::judge
