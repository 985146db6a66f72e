// RoPE as chapter 1's RoPE widget draws it, as embind functions taking an
// object and returning JSON text, in double precision:
//
//   ropeAngles(options)   {head_dim, theta, positions: [p, ...]} -> {angles: [T][dh/2]}
//   ropeRotate(options)   {vector: [dh], positions, theta, pairing} -> {rotated: [T][dh]}
//   ropeScores(options)   {q: [dh], k: [dh], positions: [p, ...], theta, pairing}
//        -> {scores: [P][P]}: q rotated to position m dotted with k rotated to position n
#include <cstdint>
#include <vector>

#include <emscripten/bind.h>

#include "json_args.hpp"
#include "ops/rope.hpp"

namespace anatomy::wasm {
namespace {

std::vector<std::int64_t> position_list(const json& options) {
    std::vector<std::int64_t> positions;
    for (double p : number_list(options.value("positions", json::array({0})), "positions")) {
        if (p < 0 || p > 1e9 || p != double(std::int64_t(p))) throw InputError("positions must be whole numbers from 0 to 1e9");
        positions.push_back(std::int64_t(p));
    }
    return positions;
}

const Options rope_angles_options{"ropeAngles", {"head_dim", "theta", "positions"}};
std::string rope_angles_json(const emscripten::val& options_js) {
    return json_or_error([&] {
        const json options = options_from_js(options_js, rope_angles_options);
        const int head_dim = int_option(options, "head_dim", 8);
        if (head_dim < 2 || head_dim > 1024 || head_dim % 2) throw InputError("head_dim must be even, from 2 to 1024");
        const double theta = number_option(options, "theta", 10000.0);
        if (!(theta > 1)) throw InputError("theta must be greater than 1");
        const Matrix<double> angles = rope_angles(position_list(options), head_dim, theta);  // [T, dh/2]
        json rows = json::array();
        for (std::size_t t = 0; t < angles.shape(0); ++t)
            rows.push_back(std::vector<double>(&angles(t, 0), &angles(t, 0) + angles.shape(1)));
        return json{{"angles", rows}};
    });
}

const Options rope_rotate_options{"ropeRotate", {"vector", "positions", "theta", "pairing"}};
std::string rope_rotate_json(const emscripten::val& options_js) {
    return json_or_error([&] {
        const json options = options_from_js(options_js, rope_rotate_options);
        const std::vector<double> vector = number_list(options.value("vector", json::array()), "vector");
        if (vector.size() < 2 || vector.size() % 2) throw InputError("vector must have an even number of channels");
        const std::vector<std::int64_t> positions = position_list(options);
        const std::size_t T = positions.size(), dh = vector.size();
        Tensor4<double> x({1, 1, T, dh});  // the same vector at every position
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t d = 0; d < dh; ++d) x(0, 0, t, d) = vector[d];
        const Tensor4<double> rotated = apply_rope(x, positions, number_option(options, "theta", 10000.0),
                                                   rope_pairing_from_string(string_option(options, "pairing", "half_split")));
        json rows = json::array();
        for (std::size_t t = 0; t < T; ++t) rows.push_back(std::vector<double>(&rotated(0, 0, t, 0), &rotated(0, 0, t, 0) + dh));
        return json{{"rotated", rows}};
    });
}

const Options rope_scores_options{"ropeScores", {"q", "k", "positions", "theta", "pairing"}};
std::string rope_scores_json(const emscripten::val& options_js) {
    return json_or_error([&] {
        const json options = options_from_js(options_js, rope_scores_options);
        const std::vector<double> q = number_list(options.value("q", json::array()), "q");
        const std::vector<double> k = number_list(options.value("k", json::array()), "k");
        if (q.size() < 2 || q.size() % 2 || q.size() != k.size()) throw InputError("q and k must have the same even number of channels");
        const std::vector<std::int64_t> positions = position_list(options);
        if (positions.size() > 512) throw InputError("at most 512 positions");
        const std::size_t P = positions.size(), dh = q.size();
        Tensor4<double> qs({1, 1, P, dh}), ks({1, 1, P, dh});  // the same vectors at every position
        for (std::size_t t = 0; t < P; ++t)
            for (std::size_t d = 0; d < dh; ++d) qs(0, 0, t, d) = q[d], ks(0, 0, t, d) = k[d];
        const double theta = number_option(options, "theta", 10000.0);
        const RopePairing pairing = rope_pairing_from_string(string_option(options, "pairing", "half_split"));
        const Tensor4<double> qr = apply_rope(qs, positions, theta, pairing), kr = apply_rope(ks, positions, theta, pairing);
        json rows = json::array();
        for (std::size_t m = 0; m < P; ++m) {
            std::vector<double> row(P);
            for (std::size_t n = 0; n < P; ++n)
                for (std::size_t d = 0; d < dh; ++d) row[n] += qr(0, 0, m, d) * kr(0, 0, n, d);
            rows.push_back(row);
        }
        return json{{"scores", rows}};
    });
}

}  // namespace

EMSCRIPTEN_BINDINGS(anatomy_rope) {
    emscripten::function("ropeAngles", &rope_angles_json);
    emscripten::function("ropeRotate", &rope_rotate_json);
    emscripten::function("ropeScores", &rope_scores_json);
}

}  // namespace anatomy::wasm
