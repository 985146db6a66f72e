#include "logits.hpp"

#include <algorithm>
#include <cmath>
#include <string>

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

template <typename Real>
Tensor3<Real> tied_logits_backward(const Tensor3<Real>& x, const Matrix<Real>& embedding, const Tensor3<Real>& dlogits,
                                   Matrix<Real>& dembedding) {
    const std::size_t rows = x.shape(0) * x.shape(1), D = x.shape(2), V = embedding.shape(0);
    Tensor3<Real> dx = xt::zeros<Real>(x.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* x_row = x.data() + r * D;
        Real* dx_row = dx.data() + r * D;
        for (std::size_t v = 0; v < V; ++v) {
            const Real g = dlogits.data()[r * V + v];
            const Real* e_row = embedding.data() + v * D;
            Real* de_row = dembedding.data() + v * D;
            for (std::size_t d = 0; d < D; ++d) {
                dx_row[d] += g * e_row[d];
                de_row[d] += g * x_row[d];
            }
        }
    }
    return dx;
}

namespace {

// A row of logits' softmax, stably, in fp64: the row's maximum `high` and
// sum = sum_v exp(logit_v - high), so that
//   softmax(row)[v]     = exp(logit_v - high) / sum
//   log softmax(row)[v] = logit_v - high - log(sum)
struct SoftmaxNormaliser {
    double high, sum;
};

template <typename Real>
SoftmaxNormaliser softmax_normaliser(const Real* row, std::size_t V) {
    const double high = double(*std::max_element(row, row + V));
    double sum = 0;
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - high);
    return {high, sum};
}

}  // namespace

template <typename Real>
double cross_entropy(const Tensor3<Real>& logits, const TokenIds& targets) {
    const std::size_t rows = logits.shape(0) * logits.shape(1), V = logits.shape(2);
    double total = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        const std::int32_t target = targets.data()[r];
        if (target < 0 || std::size_t(target) >= V) throw InputError("cross_entropy: target " + std::to_string(target) + " is outside the vocabulary");
        const Real* row = logits.data() + r * V;  // [V]
        const SoftmaxNormaliser n = softmax_normaliser(row, V);
        total -= double(row[target]) - n.high - std::log(n.sum);  // -log softmax(row)[target]
    }
    return total / double(rows);
}

template <typename Real>
Tensor3<Real> cross_entropy_backward(const Tensor3<Real>& logits, const TokenIds& targets) {
    const std::size_t rows = logits.shape(0) * logits.shape(1), V = logits.shape(2);
    Tensor3<Real> dlogits(logits.shape());
    for (std::size_t r = 0; r < rows; ++r) {
        const Real* row = logits.data() + r * V;
        Real* out = dlogits.data() + r * V;
        const SoftmaxNormaliser n = softmax_normaliser(row, V);
        for (std::size_t v = 0; v < V; ++v) {
            const double p = std::exp(double(row[v]) - n.high) / n.sum;  // softmax(row)[v]
            out[v] = Real((p - (std::int32_t(v) == targets.data()[r] ? 1.0 : 0.0)) / double(rows));
        }
    }
    return dlogits;
}

template Tensor3<float> tied_logits_backward(const Tensor3<float>&, const Matrix<float>&, const Tensor3<float>&, Matrix<float>&);
template Tensor3<double> tied_logits_backward(const Tensor3<double>&, const Matrix<double>&, const Tensor3<double>&, Matrix<double>&);
template double cross_entropy(const Tensor3<float>&, const TokenIds&);
template double cross_entropy(const Tensor3<double>&, const TokenIds&);
template Tensor3<float> cross_entropy_backward(const Tensor3<float>&, const TokenIds&);
template Tensor3<double> cross_entropy_backward(const Tensor3<double>&, const TokenIds&);

template Tensor3<float> tied_logits(const Tensor3<float>&, const Matrix<float>&);
template Tensor3<double> tied_logits(const Tensor3<double>&, const Matrix<double>&);

}  // namespace anatomy
