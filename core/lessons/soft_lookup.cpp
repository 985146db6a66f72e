#include "soft_lookup.hpp"

#include "../ops/attention.hpp"

namespace anatomy {

SoftLookup soft_lookup(const Vector<double>& query, const Matrix<double>& keys, const Matrix<double>& values, double scale) {
    const std::size_t N = keys.shape(0), Dk = keys.shape(1), Dv = values.shape(1);
    if (query.size() != Dk || values.shape(0) != N) throw InputError("soft_lookup: query, keys and values disagree in shape");
    if (N == 0) throw InputError("soft_lookup: there must be at least one key");
    if (!(scale > 0)) throw InputError("soft_lookup: the scale must be positive");

    // The same ops the model uses, on one batch, one head, one query: [1, 1, 1, N].
    Tensor4<double> scores({1, 1, 1, N});
    for (std::size_t n = 0; n < N; ++n) {
        double dot = 0;
        for (std::size_t d = 0; d < Dk; ++d) dot += query(d) * keys(n, d);
        scores(0, 0, 0, n) = scale * dot;
    }
    const Tensor4<double> weights = softmax_rows(scores);
    Tensor4<double> v({1, 1, N, Dv});
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t d = 0; d < Dv; ++d) v(0, 0, n, d) = values(n, d);
    const Tensor4<double> mixed = weighted_values(weights, v);  // [1, 1, 1, Dv]

    SoftLookup out{xt::zeros<double>({N}), xt::zeros<double>({N}), xt::zeros<double>({Dv})};
    for (std::size_t n = 0; n < N; ++n) out.scores(n) = scores(0, 0, 0, n), out.weights(n) = weights(0, 0, 0, n);
    for (std::size_t d = 0; d < Dv; ++d) out.mixed(d) = mixed(0, 0, 0, d);
    return out;
}

}  // namespace anatomy
