// The one matrix-product loop under the projections and their backward.
#pragma once

#include <cstddef>

namespace anatomy {

// out += a @ b, all row-major:
//   a: [R, K] (or stored as its transpose [K, R], a_transposed), b: [K, N],
//   out: [R, N] (holding what to add to: zeros for a plain product)
// Each out[r, n] has a[r, k] * b[k, n] added in order of k, onto its starting value:
// the same bits however the loop is blocked, on any vector width, natively and in
// wasm (the core is compiled without fused multiply-add). Blocked a few rows by
// one or two vectors of columns so the sums stay in registers while k runs.
template <typename Real>
void matmul_accumulate(const Real* a, bool a_transposed, const Real* b, Real* out, std::size_t R, std::size_t K,
                       std::size_t N);

}  // namespace anatomy
