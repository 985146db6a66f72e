#include "diff.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>
#include <xtensor/xmanipulation.hpp>

#include "../judge/mistakes.hpp"
#include "../model/forward.hpp"
#include "../model/kv_cache.hpp"
#include "../non_finite.hpp"
#include "../ops/rms_norm.hpp"

namespace anatomy {
namespace {

using judge::Nd;
using nlohmann::json;

// One name of the table: where it sits in the data flow and its layout for these tokens.
struct Slot {
    std::string name;                // "layers.0.q"
    std::string op;                  // "q": the name without its layer
    int layer = -1;                  // -1 outside the layers
    std::vector<std::size_t> shape;
    std::vector<std::string> axes;   // what each index counts
};

// Every name, in the order the forward computes them, for T new tokens over S keys.
std::vector<Slot> table(const ModelConfig& c, std::size_t B, std::size_t T, std::size_t S) {
    const std::size_t D = std::size_t(c.hidden_size), Hq = std::size_t(c.n_heads), Hkv = std::size_t(c.n_kv_heads);
    const std::size_t dh = std::size_t(c.head_dim), V = std::size_t(c.vocab_size);
    const std::vector<std::string> rows = {"sequence", "position", "channel"}, heads = {"sequence", "head", "position", "channel"},
                                   maps = {"sequence", "head", "position", "key"};
    std::vector<Slot> slots = {{"embed", "embed", -1, {B, T, D}, rows}};
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string at = "layers." + std::to_string(l) + ".";
        const auto add = [&](const std::string& op, std::vector<std::size_t> shape, const std::vector<std::string>& axes) {
            slots.push_back({at + op, op, l, std::move(shape), axes});
        };
        add("attn_norm", {B, T, D}, rows);
        add("q", {B, Hq, T, dh}, heads), add("k", {B, Hkv, T, dh}, heads), add("v", {B, Hkv, T, dh}, heads);
        add("q_rope", {B, Hq, T, dh}, heads), add("k_rope", {B, Hkv, T, dh}, heads);
        add("scores", {B, Hq, T, S}, maps), add("probs", {B, Hq, T, S}, maps), add("heads", {B, Hq, T, dh}, heads);
        add("attn_out", {B, T, D}, rows), add("resid_mid", {B, T, D}, rows), add("ffn_norm", {B, T, D}, rows);
        add("ffn_out", {B, T, D}, rows), add("out", {B, T, D}, rows);
    }
    slots.push_back({"final_norm", "final_norm", -1, {B, T, D}, rows});
    slots.push_back({"logits", "logits", -1, {B, T, V}, {"sequence", "position", "token"}});
    return slots;
}

// The core's forward in float64, every tensor of the table by name: the pass over the
// tokens after the first `cached`, which went through the KV cache first.
struct Ours {
    Model<double> model;
    ForwardCapture<double> capture;    // the pass the learner's tensors describe
    std::vector<Nd> keys, values;      // per layer, every key after RoPE and every value: [B, Hkv, S, dh]
    std::size_t cached = 0;
    std::map<std::string, Nd> tensors;
};

TokenIds columns(const TokenIds& tokens, std::size_t first, std::size_t last) {
    return xt::view(tokens, xt::all(), xt::range(first, last));
}

Ours run_ours(const Model<float>& weights, const TokenIds& tokens, std::size_t cached) {
    Ours o{cast_model<double>(weights), {}, {}, {}, cached, {}};
    KVCache<double> cache = empty_cache<double>(o.model.config, tokens.shape(0));
    if (cached) forward(o.model, cache, columns(tokens, 0, cached));
    const Tensor3<double> logits = forward(o.model, cache, columns(tokens, cached, tokens.shape(1)), AttentionPath::grouped, &o.capture);
    for (std::size_t l = 0; l < cache.keys.size(); ++l) o.keys.emplace_back(cache.keys[l]), o.values.emplace_back(cache.values[l]);
    const ModelConfig& c = o.model.config;
    o.tensors["embed"] = o.capture.layers.front().input;
    for (std::size_t l = 0; l < o.capture.layers.size(); ++l) {
        const LayerCapture<double>& f = o.capture.layers[l];
        const std::string at = "layers." + std::to_string(l) + ".";
        o.tensors[at + "attn_norm"] = f.normed_input;
        o.tensors[at + "q"] = f.q, o.tensors[at + "k"] = f.k, o.tensors[at + "v"] = f.v;
        o.tensors[at + "q_rope"] = f.q_rope, o.tensors[at + "k_rope"] = f.k_rope;
        o.tensors[at + "scores"] = f.scores, o.tensors[at + "probs"] = f.probs, o.tensors[at + "heads"] = f.head_outputs;
        o.tensors[at + "attn_out"] = f.attention_update, o.tensors[at + "resid_mid"] = f.after_attention;
        o.tensors[at + "ffn_norm"] = rms_norm(f.after_attention, o.model.weights.layers[l].ffn_norm, c.rms_norm_eps);
        o.tensors[at + "ffn_out"] = f.ffn_output, o.tensors[at + "out"] = f.output;
    }
    o.tensors["final_norm"] = o.capture.final_normed;
    o.tensors["logits"] = logits;
    return o;
}

std::vector<std::size_t> unravel(std::size_t flat, const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> index(shape.size());
    for (std::size_t a = shape.size(); a-- > 0;) index[a] = flat % shape[a], flat /= shape[a];
    return index;
}

// A scores cell the mask hides (key after the query, whose position is its row plus
// the cached tokens): not compared.
bool masked(const Slot& slot, std::size_t flat, std::size_t cached) {
    if (slot.op != "scores") return false;
    const std::vector<std::size_t> index = unravel(flat, slot.shape);
    return index[3] > index[2] + cached;
}

bool within(double theirs, double ours, const DiffTolerance& tol) {
    return std::abs(theirs - ours) <= tol.atol + tol.rtol * std::abs(ours);
}

// How a value that is not finite counts: a learner's tensor is never right with one,
// on either side (an infinite error); a mistake's tensor is matched by the learner's
// when both hold the same NaN or infinity there (that is what the mistake computes).
enum class NonFiniteRule { infinite_error, same_value_matches };

struct Comparison {
    double max_abs = 0, max_rel = 0;
    std::size_t mismatches = 0;
    std::optional<std::size_t> first;  // flat index of the first mismatch
};

//   values: the learner's (or a mistake's) tensor, flat, in `slot`'s shape
Comparison compare(const Slot& slot, const Nd& ours, const double* values, const DiffTolerance& tol, std::size_t cached,
                   NonFiniteRule rule = NonFiniteRule::infinite_error) {
    Comparison c;
    for (std::size_t i = 0; i < ours.size(); ++i) {
        if (masked(slot, i, cached)) continue;
        const double a = values[i], b = ours.data()[i];
        bool agree;
        if (std::isfinite(a) && std::isfinite(b)) {
            const double error = std::abs(a - b);
            c.max_abs = std::max(c.max_abs, error);
            if (b != 0) c.max_rel = std::max(c.max_rel, error / std::abs(b));
            agree = within(a, b, tol);
        } else {
            c.max_abs = c.max_rel = INFINITY;
            agree = rule == NonFiniteRule::same_value_matches && (std::isnan(a) ? std::isnan(b) : a == b);
        }
        if (!agree) {
            ++c.mismatches;
            if (!c.first) c.first = i;
        }
    }
    return c;
}

// A known mistake: its name, what it is, and the tensor it gives at the slot.
struct Candidate {
    std::string name, description;
    Nd tensor;
};

// The mistakes that could first show at `slot`, computed on the core's inputs there.
std::vector<Candidate> candidates(const Slot& slot, const Ours& o) {
    const ModelConfig& c = o.model.config;
    std::vector<Candidate> out;
    const std::string at = "layers." + std::to_string(slot.layer) + ".";
    const auto ours = [&](const std::string& name) -> const Nd& { return o.tensors.at(at + name); };
    const Nd positions = xt::adapt(std::vector<double>(o.capture.positions.begin(), o.capture.positions.end()));  // [T]

    // RMSNorm: the norm's input and weight.
    if (slot.op == "attn_norm" || slot.op == "ffn_norm" || slot.op == "final_norm") {
        const bool final = slot.op == "final_norm";
        const LayerWeights<double>* w = final ? nullptr : &o.model.weights.layers[std::size_t(slot.layer)];
        const Nd input = final ? Nd(o.capture.layers.back().output)
                               : slot.op == "attn_norm" ? Nd(o.capture.layers[std::size_t(slot.layer)].input) : ours("resid_mid");
        const Nd weight = final ? Nd(o.model.weights.final_norm) : slot.op == "attn_norm" ? Nd(w->attn_norm) : Nd(w->ffn_norm);
        out.push_back({"rmsnorm_mean_subtracted", "RMSNorm with the mean subtracted first (that is LayerNorm without its bias)",
                       judge::rmsnorm_mistake(input, weight, c.rms_norm_eps, judge::RmsMistake::mean_subtracted)});
        out.push_back({"rmsnorm_eps_outside_sqrt", "RMSNorm's eps added outside the square root: x / (sqrt(mean(x^2)) + eps)",
                       judge::rmsnorm_mistake(input, weight, c.rms_norm_eps, judge::RmsMistake::eps_outside_sqrt)});
    }
    // The head: an untied checkpoint's own lm_head passed over for the embedding table.
    if (slot.op == "logits" && !c.tie_embeddings)
        out.push_back({"head_tied_to_embedding", "logits from the embedding table where this checkpoint has its own output head (lm_head)",
                       judge::projection_recipe(o.tensors.at("final_norm"), Nd(xt::transpose(o.model.weights.embedding)))});
    if (slot.layer < 0) return out;
    const LayerWeights<double>& w = o.model.weights.layers[std::size_t(slot.layer)];

    // Projections into heads: the split without its transpose; a square weight read the wrong way round.
    if (slot.op == "q" || slot.op == "k" || slot.op == "v") {
        const Matrix<double>& weight = slot.op == "q" ? w.wq : slot.op == "k" ? w.wk : w.wv;  // [in, out]
        const std::size_t heads = slot.shape[1];
        const Nd flat = judge::projection_recipe(ours("attn_norm"), Nd(weight));  // [B, T, H*dh]
        out.push_back({"heads_reshape_without_transpose",
                       "heads split by a bare reshape of [B, T, H*dh] to [B, H, T, dh], without moving the head axis before the positions",
                       judge::split_heads_recipe(flat, heads, judge::HeadLayout::reshape_only)});
        if (weight.shape(0) == weight.shape(1))
            out.push_back({"weights_in_out", "the projection's weight used as [in, out] where the checkpoint stores it [out, in] (x @ W instead of x @ W.T)",
                           judge::split_heads_recipe(judge::projection_recipe(ours("attn_norm"), Nd(xt::transpose(weight))), heads,
                                                     judge::HeadLayout::transpose)});
    }

    // RoPE: the other pairing of channels.
    const bool half_split = c.rope_pairing == RopePairing::half_split;
    const auto rope = [&](const Nd& x, bool swapped) {
        const bool interleaved = half_split == swapped;
        return judge::rope_mistake(x, positions, c.rope_theta,
                                   interleaved ? judge::RopeMistake::interleaved_pairs : judge::RopeMistake::half_split_pairs);
    };
    const auto rope_at = [&](const Nd& x, const Nd& at) {  // the model's pairing at other positions
        return judge::rope_mistake(x, at, c.rope_theta, half_split ? judge::RopeMistake::half_split_pairs : judge::RopeMistake::interleaved_pairs);
    };
    if (slot.op == "q_rope" || slot.op == "k_rope") {
        const Nd& unrotated = ours(slot.op == "q_rope" ? "q" : "k");
        out.push_back({"rope_pairing_swapped",
                       half_split ? "RoPE rotating adjacent channels (2i, 2i+1) where this model pairs channel i with i + dh/2"
                                  : "RoPE pairing channel i with i + dh/2 where this model rotates adjacent channels (2i, 2i+1)",
                       rope(unrotated, true)});
        if (o.cached)
            out.push_back({"positions_restart", "after the cache, positions starting again at 0 instead of at the cache's length " +
                                                    std::to_string(o.cached),
                           rope_at(unrotated, positions - double(o.cached))});
    }

    // Attention: each way of getting the scores, the mask, the softmax or the shared KV head wrong.
    if (slot.op == "scores" || slot.op == "probs" || slot.op == "heads") {
        using judge::AttentionRecipe;
        const auto step = [&](const judge::AttentionSteps& s) { return slot.op == "scores" ? s.scores : slot.op == "probs" ? s.probs : s.out; };
        // Every key and value, cached and new: [B, Hkv, S, dh].
        const Nd& keys = o.keys[std::size_t(slot.layer)];
        const Nd& values = o.values[std::size_t(slot.layer)];
        const auto recipe = [&](const std::string& name, const std::string& description, AttentionRecipe r, const Nd& v) {
            out.push_back({name, description, step(judge::attention_recipe_steps(ours("q_rope"), keys, v, r))});
        };
        // With learned attention sinks, the judge's recipes (softmax rows that sum to 1) are each
        // mistake and the sink left out at once: the one named is the sink left out, the plain recipe.
        if (c.attention_sinks) {
            if (slot.op != "scores")
                recipe("sinks_ignored", "the learned attention sinks left out: a plain softmax, each row summing to 1 where this "
                                        "model gives part of every row to its sink (layers.{l}.self_attn.sinks)",
                       AttentionRecipe{}, values);
            return out;
        }
        AttentionRecipe r;
        r.scale = judge::ScaleRule::none;
        recipe("scale_missing", "scores not divided by sqrt(dh)", r, values);
        r.scale = judge::ScaleRule::inv_d;
        recipe("scale_inv_d", "scores divided by dh instead of sqrt(dh)", r, values);
        r = {};
        r.kv_head = judge::KvHeadRule::modulo;
        recipe("kv_head_modulo", "query head h reading KV head h mod Hkv instead of h / (Hq / Hkv)", r, values);
        r = {};
        r.mask_after_softmax = true;
        recipe("mask_after_softmax", "the mask applied after the softmax: future weights zeroed, the rows not renormalised", r, values);
        r = {};
        r.softmax_over_queries = true;
        recipe("softmax_wrong_axis", "the softmax taken over the queries (each key's column) instead of the keys", r, values);
        if (o.cached) {
            r = {};
            r.mask = judge::MaskRule::no_offset;
            recipe("mask_not_shifted", "the causal mask not shifted by the cache: query t sees keys up to t, not t + " + std::to_string(o.cached), r,
                   values);
        }
        const Nd every_position = xt::arange<double>(double(values.shape(2)));  // [S]
        recipe("rope_on_v", "RoPE applied to V as well as to Q and K", AttentionRecipe{}, rope_at(values, every_position));
    }

    // The output projection: the merge without its transpose; W_O read the wrong way round.
    if (slot.op == "attn_out") {
        const Nd heads = ours("heads");
        out.push_back({"heads_reshape_without_transpose", "heads merged by a bare reshape of [B, H, T, dh] to [B, T, H*dh], without the transpose",
                       judge::projection_recipe(judge::merge_heads_recipe(heads, judge::HeadLayout::reshape_only), Nd(w.wo))});
        if (w.wo.shape(0) == w.wo.shape(1))
            out.push_back({"weights_in_out", "W_O used as [in, out] where the checkpoint stores it [out, in] (x @ W instead of x @ W.T)",
                           judge::projection_recipe(judge::merge_heads_recipe(heads, judge::HeadLayout::transpose), Nd(xt::transpose(w.wo)))});
    }
    return out;
}

json shape_json(const std::vector<std::size_t>& shape) { return json(shape); }

// A value for the report: the number, or "nan", "inf", "-inf" (JSON has no such numbers).
json value_json(double x) { return std::isfinite(x) ? json(x) : json(non_finite_text(x)); }

// The [T, X] block of a [B, T, X] or [B, H, T, X] tensor (flat, row-major) that holds
// the value at `index`: its sequence, and its head when it has heads.
json block_at(const double* values, const std::vector<std::size_t>& shape, const std::vector<std::size_t>& index) {
    const std::size_t rows = shape[shape.size() - 2], columns = shape.back();
    const std::size_t block = shape.size() == 4 ? index[0] * shape[1] + index[1] : index[0];
    json grid = json::array();
    for (std::size_t r = 0; r < rows; ++r) {
        const double* row = values + (block * rows + r) * columns;
        grid.push_back(std::vector<double>(row, row + columns));
    }
    return grid;
}

}  // namespace

DiffTolerance diff_tolerance(bool float64) { return float64 ? DiffTolerance{1e-10, 1e-8} : DiffTolerance{1e-5, 1e-4}; }

json diff_report(const Model<float>& model, const TokenIds& tokens, const std::map<std::string, LearnerTensor>& theirs,
                 std::size_t cached, bool with_block) {
    const ModelConfig& c = model.config;
    if (theirs.empty()) throw InputError("the learner's file holds no tensors");
    for (const std::int32_t id : tokens)
        if (id < 0 || id >= c.vocab_size)
            throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(c.vocab_size - 1) + "]");
    const std::size_t B = tokens.shape(0), S = tokens.shape(1);
    if (cached >= S) throw InputError("--cached " + std::to_string(cached) + " leaves no token of the " + std::to_string(S) + " to compare");
    const std::size_t T = S - cached;  // the new tokens the learner's tensors describe
    const std::vector<Slot> slots = table(c, B, T, S);

    // Every name must be one of the table's, shaped as it is for these tokens.
    for (const auto& given : theirs) {
        const std::string& name = given.first;  // (a lambda cannot capture a structured binding in C++17)
        const LearnerTensor& tensor = given.second;
        const auto slot = std::find_if(slots.begin(), slots.end(), [&](const Slot& s) { return s.name == name; });
        if (slot == slots.end()) {
            // "layers.{l}.op" with an l past the last layer: say so rather than "unknown".
            const std::size_t dot = name.find('.', 7);
            const std::string layer = name.rfind("layers.", 0) == 0 && dot != std::string::npos ? name.substr(7, dot - 7) : "";
            if (!layer.empty() && layer.size() < 9 && layer.find_first_not_of("0123456789") == std::string::npos &&
                std::stoul(layer) >= std::size_t(c.n_layers))
                throw InputError("'" + name + "': the model has " + std::to_string(c.n_layers) + " layers (0 to " +
                                 std::to_string(c.n_layers - 1) + ")");
            throw InputError("'" + name + "' is not a tensor attn diff knows (embed, layers.{l}.attn_norm, .q, .k, .v, .q_rope, .k_rope, "
                             ".scores, .probs, .heads, .attn_out, .resid_mid, .ffn_norm, .ffn_out, .out, final_norm, logits)");
        }
        if (tensor.shape != slot->shape) {
            std::string axes;
            for (const std::string& a : slot->axes) axes += (axes.empty() ? "" : ", ") + a;
            const std::string after = cached ? " new tokens after " + std::to_string(cached) + " cached" : " tokens";
            throw InputError("'" + name + "' has shape " + shape_text(tensor.shape) + "; for " + std::to_string(B) + " x " +
                             std::to_string(T) + after + " it must be " + shape_text(slot->shape) + " (" + axes + ")");
        }
    }

    const Ours ours = run_ours(model, tokens, cached);
    json report = {{"tokens", json::array()}, {"cached", cached}, {"compared", json::array()}, {"not_given", json::array()},
                   {"first_divergence", nullptr}, {"diagnosis", nullptr}, {"mistakes_tried", json::array()}};
    for (std::size_t b = 0; b < B; ++b) report["tokens"].push_back(std::vector<std::int32_t>(&tokens(b, 0), &tokens(b, 0) + T));

    const Slot* diverged = nullptr;
    for (const Slot& slot : slots) {
        const auto given = theirs.find(slot.name);
        if (given == theirs.end()) {
            report["not_given"].push_back(slot.name);
            continue;
        }
        const LearnerTensor& tensor = given->second;
        const DiffTolerance tol = diff_tolerance(tensor.float64);
        const Nd& mine = ours.tensors.at(slot.name);
        const Comparison cmp = compare(slot, mine, tensor.values.data(), tol, cached);
        report["compared"].push_back({{"name", slot.name},
                                      {"shape", shape_json(slot.shape)},
                                      {"precision", tensor.float64 ? "float64" : "float32"},
                                      {"tolerance", {{"atol", tol.atol}, {"rtol", tol.rtol}}},
                                      {"max_abs_error", cmp.max_abs},
                                      {"max_rel_error", cmp.max_rel},
                                      {"mismatches", cmp.mismatches},
                                      {"agrees", cmp.mismatches == 0}});
        if (cmp.mismatches == 0 || diverged) continue;

        diverged = &slot;
        const std::vector<std::size_t> index = unravel(*cmp.first, slot.shape);
        json where = {{"tensor", slot.name}, {"axes", slot.axes}, {"index", index},
                      {"ours", value_json(mine.data()[*cmp.first])}, {"theirs", value_json(tensor.values[*cmp.first])},
                      {"mismatches", cmp.mismatches}};
        if (slot.layer >= 0) where["layer"] = slot.layer;
        for (std::size_t a = 0; a < slot.axes.size(); ++a) where[slot.axes[a]] = index[a];
        if (with_block)
            where["block"] = {{"theirs", block_at(tensor.values.data(), slot.shape, index)}, {"ours", block_at(mine.data(), slot.shape, index)}};
        report["first_divergence"] = where;

        for (const Candidate& candidate : candidates(slot, ours)) {
            report["mistakes_tried"].push_back(candidate.name);
            if (compare(slot, candidate.tensor, tensor.values.data(), tol, cached, NonFiniteRule::same_value_matches).mismatches == 0 &&
                report["diagnosis"].is_null())
                report["diagnosis"] = {{"mistake", candidate.name}, {"description", candidate.description}};
        }
    }
    report["agrees"] = diverged == nullptr;
    return report;
}

}  // namespace anatomy
