// The core functions behind the notebook chapter's smaller widgets, as embind
// functions taking an object and returning JSON text (masks return an object with
// their tile map as bytes).
// RoPE's, for chapter 1, are in bindings_rope.cpp.
//
//   maskTiles(spec, tileQ, tileK)  spec {kind, T, S, window, sinks, prefix, chunk, document_lengths}
//        -> {rows, cols, skipped, partial, full, visible_cells, skipped_fraction,
//            states: Uint8Array rows*cols (0 skipped, 1 partial, 2 full)} or {error}
//   softLookup(options)   {query: [x, y], keys: [[x, y], ...], values: [[...], ...], scale}
//        -> {scores, weights, mixed}
//   attentionCost(options) {d, T, n_heads, n_kv_heads} -> {prefill: {...}, decode: {...}, crossover_T}
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "json_args.hpp"
#include "lessons/cost.hpp"
#include "lessons/soft_lookup.hpp"
#include "masks.hpp"

namespace anatomy::wasm {
namespace {

emscripten::val error_object(const std::string& message) {
    emscripten::val error = emscripten::val::object();
    error.set("error", message);
    return error;
}

emscripten::val mask_tiles(const emscripten::val& spec_js, int tile_q, int tile_k) {
    try {
        const MaskSpec spec = mask_spec_from_json(json_from_js(spec_js));
        std::vector<TileState> states;
        const TileCounts counts = classify_tiles(spec, tile_q, tile_k, &states);

        emscripten::val out = emscripten::val::object();
        out.set("rows", double(counts.rows));
        out.set("cols", double(counts.cols));
        out.set("skipped", double(counts.skipped));
        out.set("partial", double(counts.partial));
        out.set("full", double(counts.full));
        out.set("visible_cells", double(counts.visible_cells));
        out.set("skipped_fraction", counts.skipped_fraction());
        // Copy out of the wasm heap: the view would dangle once `states` is freed.
        emscripten::val bytes = emscripten::val::global("Uint8Array").new_(states.size());
        bytes.call<void>("set", emscripten::val(emscripten::typed_memory_view(
                                    states.size(), reinterpret_cast<const std::uint8_t*>(states.data()))));
        out.set("states", bytes);
        return out;
    } catch (const std::exception& e) {
        return error_object(e.what());
    }
}

const Options soft_lookup_options{"softLookup", {"query", "keys", "values", "scale"}};
std::string soft_lookup_json(const emscripten::val& options_js) {
    return json_or_error([&] {
        const json options = options_from_js(options_js, soft_lookup_options);
        const std::vector<double> query = number_list(options.value("query", json::array()), "query");
        const json& keys = options.at("keys");
        const json& values = options.at("values");
        if (!keys.is_array() || !values.is_array() || keys.size() != values.size() || keys.empty())
            throw InputError("keys and values must be equally long, non-empty lists");
        const std::size_t N = keys.size(), Dk = query.size();
        const std::size_t Dv = values[0].is_array() ? values[0].size() : 0;
        Matrix<double> k({N, Dk}), v({N, Dv});
        for (std::size_t n = 0; n < N; ++n) {
            const std::vector<double> key = number_list(keys[n], "each key");
            const std::vector<double> value = number_list(values[n], "each value");
            if (key.size() != Dk || value.size() != Dv) throw InputError("every key must match the query's length and every value the first value's");
            for (std::size_t d = 0; d < Dk; ++d) k(n, d) = key[d];
            for (std::size_t d = 0; d < Dv; ++d) v(n, d) = value[d];
        }
        Vector<double> q = xt::zeros<double>({Dk});
        for (std::size_t d = 0; d < Dk; ++d) q(d) = query[d];
        const SoftLookup result = soft_lookup(q, k, v, number_option(options, "scale", 1.0));
        return json{{"scores", std::vector<double>(result.scores.begin(), result.scores.end())},
                    {"weights", std::vector<double>(result.weights.begin(), result.weights.end())},
                    {"mixed", std::vector<double>(result.mixed.begin(), result.mixed.end())}};
    });
}

json flops_json(const AttentionFlops& f) {
    return {{"projections", f.projections}, {"scores", f.scores}, {"weighted", f.weighted}};
}

const Options attention_cost_options{"attentionCost", {"d", "T", "n_heads", "n_kv_heads", "bytes_per_scalar"}};
std::string attention_cost_json(const emscripten::val& options_js) {
    return json_or_error([&] {
        const json options = options_from_js(options_js, attention_cost_options);
        const double d = number_option(options, "d", 4096), T = number_option(options, "T", 4096);
        const int heads = int_option(options, "n_heads", 32), kv_heads = int_option(options, "n_kv_heads", heads);
        if (!(d >= 1) || !(T >= 1)) throw InputError("d and T must be at least 1");
        if (heads < 1 || kv_heads < 1 || heads % kv_heads) throw InputError("n_heads must be a positive multiple of n_kv_heads");
        const int bytes = int_option(options, "bytes_per_scalar", 2);
        return json{{"prefill", flops_json(prefill_flops(d, T, heads, kv_heads))},
                    {"decode", flops_json(decode_flops(d, T, heads, kv_heads))},
                    {"decode_cache_bytes", decode_cache_bytes(d, T, heads, kv_heads, bytes)},
                    {"crossover_T", crossover_length(d, heads, kv_heads)}};
    });
}

}  // namespace

EMSCRIPTEN_BINDINGS(anatomy_lessons) {
    emscripten::function("maskTiles", &mask_tiles);
    emscripten::function("softLookup", &soft_lookup_json);
    emscripten::function("attentionCost", &attention_cost_json);
}

}  // namespace anatomy::wasm
