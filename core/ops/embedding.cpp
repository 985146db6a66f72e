#include "embedding.hpp"

#include <algorithm>

namespace anatomy {

// [anatomy:embedding]
template <typename Real>
Tensor3<Real> embed(const Matrix<Real>& table, const TokenIds& ids) {
    const std::size_t V = table.shape(0), D = table.shape(1);
    const std::size_t B = ids.shape(0), T = ids.shape(1);
    Tensor3<Real> x({B, T, D});
    for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t t = 0; t < T; ++t) {
            const std::int32_t id = ids(b, t);
            if (id < 0 || std::size_t(id) >= V)
                throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                 std::to_string(V - 1) + "]");
            const Real* row = table.data() + std::size_t(id) * D;
            std::copy(row, row + D, x.data() + (b * T + t) * D);
        }
    }
    return x;
}
// [/anatomy:embedding]

template <typename Real>
void embed_backward(const Tensor3<Real>& dx, const TokenIds& ids, Matrix<Real>& dtable) {
    const std::size_t B = ids.shape(0), T = ids.shape(1), D = dtable.shape(1);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t) {
            Real* row = &dtable(std::size_t(ids(b, t)), 0);
            for (std::size_t d = 0; d < D; ++d) row[d] += dx(b, t, d);
        }
}

template void embed_backward(const Tensor3<float>&, const TokenIds&, Matrix<float>&);
template void embed_backward(const Tensor3<double>&, const TokenIds&, Matrix<double>&);
template Tensor3<float> embed(const Matrix<float>&, const TokenIds&);
template Tensor3<double> embed(const Matrix<double>&, const TokenIds&);

}  // namespace anatomy
