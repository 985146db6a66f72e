#include "swiglu.hpp"

#include <cmath>

#include "exponential.hpp"
#include "linear.hpp"

namespace anatomy {

// [anatomy:swiglu]
template <typename Real>
Tensor3<Real> silu(const Tensor3<Real>& a) {
    Tensor3<Real> out(a.shape());
    // exponential (exponential.hpp): the same bits natively and in wasm. Plain
    // pointers and a fixed count, so that the loop vectorises.
    const Real* in = a.data();
    Real* result = out.data();
    const std::size_t n = a.size();
    for (std::size_t i = 0; i < n; ++i) result[i] = in[i] / (Real(1) + exponential(-in[i]));
    return out;
}

template <typename Real>
Tensor3<Real> swiglu_hidden(const Tensor3<Real>& gate_in, const Tensor3<Real>& up) {
    const Tensor3<Real> gate = silu(gate_in);  // [B, T, F]
    return gate * up;                          // [B, T, F], elementwise gating
}

template <typename Real>
Tensor3<Real> swiglu(const Tensor3<Real>& x, const Matrix<Real>& w_gate, const Matrix<Real>& w_up,
                     const Matrix<Real>& w_down) {
    const Tensor3<Real> hidden = swiglu_hidden(linear(x, w_gate), linear(x, w_up));  // [B, T, F]
    return linear(hidden, w_down);                                                   // [B, T, D]
}
// [/anatomy:swiglu]

template Tensor3<float> silu(const Tensor3<float>&);
template Tensor3<double> silu(const Tensor3<double>&);

template <typename Real>
std::pair<Tensor3<Real>, Tensor3<Real>> swiglu_hidden_backward(const Tensor3<Real>& gate, const Tensor3<Real>& up,
                                                               const Tensor3<Real>& dh) {
    Tensor3<Real> dgate(gate.shape()), dup(up.shape());
    const Real *a_in = gate.data(), *up_in = up.data(), *dh_in = dh.data();  // plain pointers: the loop vectorises
    Real *dgate_out = dgate.data(), *dup_out = dup.data();
    const std::size_t n = gate.size();
    for (std::size_t i = 0; i < n; ++i) {
        const Real a = a_in[i];
        const Real sigmoid = Real(1) / (Real(1) + exponential(-a));
        const Real silu_a = a * sigmoid;
        const Real silu_slope = sigmoid * (Real(1) + a * (Real(1) - sigmoid));
        dgate_out[i] = dh_in[i] * up_in[i] * silu_slope;
        dup_out[i] = dh_in[i] * silu_a;
    }
    return {dgate, dup};
}

template std::pair<Tensor3<float>, Tensor3<float>> swiglu_hidden_backward(const Tensor3<float>&, const Tensor3<float>&, const Tensor3<float>&);
template std::pair<Tensor3<double>, Tensor3<double>> swiglu_hidden_backward(const Tensor3<double>&, const Tensor3<double>&, const Tensor3<double>&);
template Tensor3<float> swiglu_hidden(const Tensor3<float>&, const Tensor3<float>&);
template Tensor3<double> swiglu_hidden(const Tensor3<double>&, const Tensor3<double>&);
template Tensor3<float> swiglu(const Tensor3<float>&, const Matrix<float>&, const Matrix<float>&, const Matrix<float>&);
template Tensor3<double> swiglu(const Tensor3<double>&, const Matrix<double>&, const Matrix<double>&, const Matrix<double>&);

}  // namespace anatomy
