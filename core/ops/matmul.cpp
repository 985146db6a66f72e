#include "matmul.hpp"

namespace anatomy {
namespace {

// 32 bytes of lanes (8 floats or 4 doubles) as a GCC/Clang vector type: each lane
// operation is the ordinary IEEE one, so a vector of sums rounds exactly as the same
// sums one by one would. Written out because the compilers' own vectorisation of the
// block below spilled registers and shuffled (measured: 2x slower). `aligned` lets a
// vector be loaded from any float's address.
template <typename Real>
using Lanes [[gnu::vector_size(32), gnu::aligned(alignof(Real))]] = Real;

constexpr std::size_t block_rows = 4;

// Where a[i, k] lies: a[i * row + k * col] (row-major [R, K]: {K, 1}; stored as [K, R]: {1, R}).
struct Strides {
    std::size_t row, col;
};

// One block: out[0 .. 4, 0 .. vectors] += a[4, K] @ b[K, 0 .. vectors], the sums held
// in 4 x `vectors` vector registers while k runs.
template <std::size_t block_vectors, typename Real>
void block(const Real* a, Strides a_at, const Real* b, Real* out, std::size_t K, std::size_t N) {
    constexpr std::size_t width = sizeof(Lanes<Real>) / sizeof(Real);
    Lanes<Real> sum[block_rows][block_vectors];
    for (std::size_t i = 0; i < block_rows; ++i)
        for (std::size_t v = 0; v < block_vectors; ++v) sum[i][v] = *reinterpret_cast<const Lanes<Real>*>(out + i * N + v * width);
    for (std::size_t k = 0; k < K; ++k) {
        Lanes<Real> b_k[block_vectors];
        for (std::size_t v = 0; v < block_vectors; ++v) b_k[v] = *reinterpret_cast<const Lanes<Real>*>(b + k * N + v * width);
        for (std::size_t i = 0; i < block_rows; ++i) {
            const Real a_ik = a[i * a_at.row + k * a_at.col];
            for (std::size_t v = 0; v < block_vectors; ++v) sum[i][v] += a_ik * b_k[v];
        }
    }
    for (std::size_t i = 0; i < block_rows; ++i)
        for (std::size_t v = 0; v < block_vectors; ++v) *reinterpret_cast<Lanes<Real>*>(out + i * N + v * width) = sum[i][v];
}

// Any block size (the edges): the same additions, in the same order, lane by lane.
template <typename Real>
void edge_block(const Real* a, Strides a_at, const Real* b, Real* out, std::size_t rows, std::size_t cols, std::size_t K,
                std::size_t N) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t k = 0; k < K; ++k) {
            const Real a_ik = a[i * a_at.row + k * a_at.col];
            for (std::size_t j = 0; j < cols; ++j) out[i * N + j] += a_ik * b[k * N + j];
        }
}

}  // namespace

template <typename Real>
void matmul_accumulate(const Real* a, bool a_transposed, const Real* b, Real* out, std::size_t R, std::size_t K,
                       std::size_t N) {
    constexpr std::size_t width = sizeof(Lanes<Real>) / sizeof(Real);
    const Strides a_at = a_transposed ? Strides{1, R} : Strides{K, 1};
    const std::size_t full_rows = R - R % block_rows;
    for (std::size_t r = 0; r < R; r += block_rows) {
        const Real* a_rows = a + r * a_at.row;
        Real* out_rows = out + r * N;
        if (r == full_rows) {  // the last, partial block of rows
            edge_block(a_rows, a_at, b, out_rows, R - r, N, K, N);
            break;
        }
        // Two vectors of columns at a time, then one (a head's 8 channels), then lane by lane.
        std::size_t n = 0;
        for (; n + 2 * width <= N; n += 2 * width) block<2>(a_rows, a_at, b + n, out_rows + n, K, N);
        for (; n + width <= N; n += width) block<1>(a_rows, a_at, b + n, out_rows + n, K, N);
        if (n < N) edge_block(a_rows, a_at, b + n, out_rows + n, block_rows, N - n, K, N);
    }
}

template void matmul_accumulate(const float*, bool, const float*, float*, std::size_t, std::size_t, std::size_t);
template void matmul_accumulate(const double*, bool, const double*, double*, std::size_t, std::size_t, std::size_t);

}  // namespace anatomy
