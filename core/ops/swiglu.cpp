#include "swiglu.hpp"

#include <cmath>

#include "exponential.hpp"
#include "linear.hpp"

namespace anatomy {

// [anatomy:swiglu]
template <typename Real>
Tensor3<Real> silu(const Tensor3<Real>& a) {
    Tensor3<Real> out(a.shape());
    // exponential (exponential.hpp): the same bits natively and in wasm
    for (std::size_t i = 0; i < a.size(); ++i) out.data()[i] = a.data()[i] / (Real(1) + exponential(-a.data()[i]));
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
    for (std::size_t i = 0; i < gate.size(); ++i) {
        const Real a = gate.data()[i];
        const Real sigmoid = Real(1) / (Real(1) + exponential(-a));
        const Real silu_a = a * sigmoid;
        const Real silu_slope = sigmoid * (Real(1) + a * (Real(1) - sigmoid));
        dgate.data()[i] = dh.data()[i] * up.data()[i] * silu_slope;
        dup.data()[i] = dh.data()[i] * silu_a;
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
