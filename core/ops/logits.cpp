#include "logits.hpp"

namespace anatomy {

// [anatomy:tied_logits]
template <typename Real>
Tensor3<Real> tied_logits(const Tensor3<Real>& x, const Matrix<Real>& embedding) {
    const std::size_t rows = x.shape(0) * x.shape(1), D = x.shape(2), V = embedding.shape(0);
    if (embedding.shape(1) != D) throw InputError("tied_logits: hidden width differs from the embedding's");
    Tensor3<Real> logits({x.shape(0), x.shape(1), V});
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* x_row = x.data() + r * D;
        for (std::size_t v = 0; v < V; ++v) {
            const Real* e_row = embedding.data() + v * D;  // row v of E is column v of E^T
            Real dot = 0;
            for (std::size_t d = 0; d < D; ++d) dot += x_row[d] * e_row[d];
            logits.data()[r * V + v] = dot;
        }
    }
    return logits;
}
// [/anatomy:tied_logits]

template Tensor3<float> tied_logits(const Tensor3<float>&, const Matrix<float>&);
template Tensor3<double> tied_logits(const Tensor3<double>&, const Matrix<double>&);

}  // namespace anatomy
