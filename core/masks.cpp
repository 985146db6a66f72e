#include "masks.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tensor.hpp"

namespace anatomy {

std::string mask_problem(const MaskSpec& m) {
    if (m.T < 1 || m.S < 1) return "T and S must be at least 1";
    if (m.T > m.S) return "there cannot be more queries (T) than keys (S)";
    if (m.S > (1 << 20)) return "S is limited to 1,048,576 keys";
    switch (m.kind) {
        case MaskKind::sliding_window:
            if (m.window < 1) return "the window must be at least 1";
            break;
        case MaskKind::sink_window:
            if (m.window < 1) return "the window must be at least 1";
            if (m.sinks < 0) return "the number of sink tokens cannot be negative";
            break;
        case MaskKind::prefix_lm:
            if (m.prefix < 0 || m.prefix > m.S) return "the prefix must lie between 0 and S";
            break;
        case MaskKind::chunked:
            if (m.chunk < 1) return "the chunk size must be at least 1";
            break;
        case MaskKind::document: {
            std::int64_t total = 0;
            for (std::int64_t length : m.document_lengths) {
                if (length < 1) return "every document must hold at least one token";
                total += length;
            }
            if (m.document_lengths.empty() || total != m.S)
                return "document lengths must add up to S (" + std::to_string(m.S) + "), not " + std::to_string(total);
            break;
        }
        default: break;
    }
    return {};
}

void require_valid(const MaskSpec& spec) {
    const std::string problem = mask_problem(spec);
    if (!problem.empty()) throw InputError("invalid mask: " + problem);
}

std::vector<KeyRange> visible_keys(const MaskSpec& m, std::int64_t t) {
    const std::int64_t q = query_position(t, m.S - m.T);
    auto clip = [&](std::int64_t begin, std::int64_t end) {
        return KeyRange{std::clamp<std::int64_t>(begin, 0, m.S), std::clamp<std::int64_t>(end, 0, m.S)};
    };
    switch (m.kind) {
        case MaskKind::full: return {clip(0, m.S)};
        case MaskKind::causal: return {clip(0, q + 1)};  // causal_allows: s <= q
        case MaskKind::sliding_window: return {clip(q - m.window + 1, q + 1)};
        case MaskKind::sink_window: {
            const KeyRange window = clip(q - m.window + 1, q + 1);
            const KeyRange sinks = clip(0, std::min(m.sinks, q + 1));
            if (sinks.end >= window.begin) return {KeyRange{0, window.end}};  // they touch: one range
            if (sinks.end == 0) return {window};
            return {sinks, window};
        }
        case MaskKind::prefix_lm: return {clip(0, std::max(m.prefix, q + 1))};
        case MaskKind::document: {
            std::int64_t start = 0;
            for (std::int64_t length : m.document_lengths) {
                if (q < start + length) break;
                start += length;
            }
            return {clip(start, q + 1)};
        }
        case MaskKind::chunked: return {clip(q / m.chunk * m.chunk, q + 1)};
    }
    return {};
}

bool mask_allows(const MaskSpec& spec, std::int64_t t, std::int64_t s) {
    for (const KeyRange& r : visible_keys(spec, t))
        if (s >= r.begin && s < r.end) return true;
    return false;
}

double TileCounts::skipped_fraction() const {
    const std::int64_t total = rows * cols;
    return total == 0 ? 0.0 : double(skipped) / double(total);
}

TileCounts classify_tiles(const MaskSpec& spec, std::int64_t tile_q, std::int64_t tile_k, std::vector<TileState>* states) {
    require_valid(spec);
    if (tile_q < 1 || tile_k < 1) throw InputError("invalid mask: tile sizes must be at least 1");
    TileCounts counts;
    counts.rows = (spec.T + tile_q - 1) / tile_q;
    counts.cols = (spec.S + tile_k - 1) / tile_k;
    if (states) states->assign(std::size_t(counts.rows * counts.cols), TileState::skipped);

    // For one band of query rows, count per tile column how many rows touch it
    // (see at least one key in it) and how many cover it (see every key in it
    // that lies inside the matrix). Each row adds its few ranges to two
    // difference arrays, so a band costs O(rows in band + tile columns).
    std::vector<std::int64_t> touched(std::size_t(counts.cols) + 1), covered(std::size_t(counts.cols) + 1);
    for (std::int64_t band = 0; band < counts.rows; ++band) {
        std::fill(touched.begin(), touched.end(), 0);
        std::fill(covered.begin(), covered.end(), 0);
        const std::int64_t first = band * tile_q, last = std::min(spec.T, first + tile_q);
        for (std::int64_t t = first; t < last; ++t) {
            for (const KeyRange& r : visible_keys(spec, t)) {
                if (r.begin >= r.end) continue;
                counts.visible_cells += r.end - r.begin;
                // Tiles with at least one visible column: [begin / tk, (end - 1) / tk].
                const std::int64_t touch_from = r.begin / tile_k, touch_to = (r.end - 1) / tile_k + 1;
                ++touched[std::size_t(touch_from)];
                --touched[std::size_t(touch_to)];
                // Tiles whose every in-matrix column is visible: their start is >= begin and their
                // end (clipped to S) is <= end.
                const std::int64_t cover_from = (r.begin + tile_k - 1) / tile_k;
                const std::int64_t cover_to = r.end == spec.S ? counts.cols : r.end / tile_k;
                if (cover_from < cover_to) {
                    ++covered[std::size_t(cover_from)];
                    --covered[std::size_t(cover_to)];
                }
            }
        }
        const std::int64_t band_rows = last - first;
        std::int64_t touching = 0, covering = 0;
        for (std::int64_t c = 0; c < counts.cols; ++c) {
            touching += touched[std::size_t(c)];
            covering += covered[std::size_t(c)];
            const TileState state = touching == 0 ? TileState::skipped
                                    : covering == band_rows ? TileState::full
                                                            : TileState::partial;
            if (state == TileState::skipped) ++counts.skipped;
            else if (state == TileState::full) ++counts.full;
            else ++counts.partial;
            if (states) (*states)[std::size_t(band * counts.cols + c)] = state;
        }
    }
    return counts;
}

std::string mask_kind_name(MaskKind kind) {
    switch (kind) {
        case MaskKind::full: return "full";
        case MaskKind::causal: return "causal";
        case MaskKind::sliding_window: return "sliding_window";
        case MaskKind::sink_window: return "sink_window";
        case MaskKind::prefix_lm: return "prefix_lm";
        case MaskKind::document: return "document";
        case MaskKind::chunked: return "chunked";
    }
    return "?";
}

MaskKind mask_kind_from_name(const std::string& name) {
    for (MaskKind kind : {MaskKind::full, MaskKind::causal, MaskKind::sliding_window, MaskKind::sink_window,
                          MaskKind::prefix_lm, MaskKind::document, MaskKind::chunked})
        if (mask_kind_name(kind) == name) return kind;
    throw InputError("unknown mask kind '" + name + "'");
}

MaskSpec mask_spec_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw InputError("mask spec must be a JSON object");
    // Whole numbers only: 1.5 queries is a mistake to report, not to round.
    auto whole = [&](const char* key, std::int64_t fallback) {
        if (!j.contains(key)) return fallback;
        if (!j[key].is_number_integer()) throw InputError(std::string("mask spec: ") + key + " must be a whole number, got " + j[key].dump());
        return j[key].get<std::int64_t>();
    };
    MaskSpec m;
    if (!j.contains("kind") || !j["kind"].is_string()) throw InputError("mask spec: kind must be a string");
    m.kind = mask_kind_from_name(j["kind"].get<std::string>());
    if (!j.contains("T")) throw InputError("mask spec: T is required");
    m.T = whole("T", 0);
    m.S = whole("S", m.T);
    m.window = whole("window", 0);
    m.sinks = whole("sinks", 0);
    m.prefix = whole("prefix", 0);
    m.chunk = whole("chunk", 0);
    if (j.contains("document_lengths")) {
        if (!j["document_lengths"].is_array()) throw InputError("mask spec: document_lengths must be a list");
        for (const nlohmann::json& length : j["document_lengths"]) {
            if (!length.is_number_integer()) throw InputError("mask spec: document lengths must be whole numbers, got " + length.dump());
            m.document_lengths.push_back(length.get<std::int64_t>());
        }
    }
    require_valid(m);
    return m;
}

}  // namespace anatomy
