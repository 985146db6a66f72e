// Attention masks used in real systems, as per-row intervals of visible keys,
// and how many FlashAttention tiles each lets a kernel skip.
//
// Every mask here places the T queries at absolute positions history .. S - 1,
// where history = S - T keys were cached before them (T = S without a cache).
// A query at absolute position q sees:
//   full            every key                          [0, S)
//   causal          itself and everything before       [0, q]
//   sliding_window  the last `window` keys up to itself [q - window + 1, q]
//   sink_window     the first `sinks` keys, plus the sliding window
//   prefix_lm       the whole prefix (bidirectional), then causal: [0, max(prefix - 1, q)]
//   document        earlier keys of its own packed document: [start of its document, q]
//   chunked         earlier keys of its own chunk of `chunk` positions: [chunk start, q]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tensor.hpp"

namespace anatomy {

// Boolean [T, S] matrix; 1 where query row t may read key column s.
using Mask = xt::xtensor<std::uint8_t, 2>;

// The causal rule, the one place it is written. The T queries are the newest
// tokens, at absolute positions history .. history + T - 1, where history = S - T
// tokens were cached before them. Query t sees key s when s <= t + history: the
// diagonal of the usual lower triangle moves right by the history length.
inline std::int64_t query_position(std::int64_t t, std::int64_t history) { return t + history; }
inline bool causal_allows(std::int64_t t, std::int64_t s, std::int64_t history) {
    return s <= query_position(t, history);
}

enum class MaskKind { full, causal, sliding_window, sink_window, prefix_lm, document, chunked };

struct MaskSpec {
    MaskKind kind = MaskKind::causal;
    std::int64_t T = 0;  // queries (rows)
    std::int64_t S = 0;  // keys (columns), S >= T
    std::int64_t window = 0;                       // sliding_window, sink_window
    std::int64_t sinks = 0;                        // sink_window
    std::int64_t prefix = 0;                       // prefix_lm
    std::vector<std::int64_t> document_lengths;    // document: lengths of the packed documents, summing to S
    std::int64_t chunk = 0;                        // chunked
};

// A half-open range of key columns [begin, end).
struct KeyRange {
    std::int64_t begin = 0, end = 0;
};

// Empty when the spec is usable; otherwise what is wrong with it.
std::string mask_problem(const MaskSpec& spec);
void require_valid(const MaskSpec& spec);  // throws InputError

// The visible keys of query row t (0 <= t < T), as at most two disjoint, sorted ranges.
std::vector<KeyRange> visible_keys(const MaskSpec& spec, std::int64_t t);

// Cell by cell: may row t see column s? (The brute-force reference for the tile counts.)
// Rows outside [0, T) are allowed: row t - 1 is the query one position earlier (the
// judge computes off-by-one mistakes that way).
bool mask_allows(const MaskSpec& spec, std::int64_t t, std::int64_t s);

enum class TileState : std::uint8_t { skipped = 0, partial = 1, full = 2 };

struct TileCounts {
    std::int64_t rows = 0, cols = 0;  // tiles down (ceil(T / tile_q)) and across (ceil(S / tile_k))
    std::int64_t skipped = 0, partial = 0, full = 0;
    std::int64_t visible_cells = 0;   // allowed (query, key) pairs
    // Fraction of tiles a block-sparse kernel never loads: skipped / (rows * cols), in [0, 1].
    double skipped_fraction() const;
};

// Classifies every tile_q x tile_k tile: skipped (no visible cell), full (every
// cell inside the matrix visible) or partial. Edge tiles that hang past T or S
// are judged only on their cells inside the matrix. When `states` is given it
// receives rows * cols entries, row-major. Cost O(T + rows * cols).
TileCounts classify_tiles(const MaskSpec& spec, std::int64_t tile_q, std::int64_t tile_k,
                          std::vector<TileState>* states = nullptr);

std::string mask_kind_name(MaskKind kind);
MaskKind mask_kind_from_name(const std::string& name);  // throws InputError
MaskSpec mask_spec_from_json(const nlohmann::json& json);  // throws InputError

}  // namespace anatomy
