#include "matmul.hpp"

#include <cstring>

namespace anatomy {
namespace {

// Lanes of a GCC/Clang vector type, `bytes` wide (64: 16 floats): each lane operation
// is the ordinary IEEE one, so a vector of sums rounds exactly as the same sums one
// by one would. Written out because the compilers' own vectorisation of the block
// below spilled registers and shuffled (measured: 2x slower). Where the target's
// vectors are narrower (wasm's 16 bytes) the compiler splits each operation into several.
// Vectors are loaded and stored with memcpy, as in attention_fast_steps.cpp: an element's
// address need not be aligned to the vector (Clang keeps a vector type's full alignment
// even under an `aligned` attribute asking for less), and memcpy is one unaligned load.
template <typename Real, std::size_t bytes>
using Lanes [[gnu::vector_size(bytes)]] = Real;

// The block's shape per target (the bits are the same for any): natively eight rows
// by 64-byte vectors; in wasm, whose vectors are 16 bytes and whose engines keep 16
// of them in registers, four rows by 16-byte vectors (measured in Node: 2x faster at
// width 64 than the native shape, which spilled).
#if defined(__wasm__)
constexpr std::size_t block_rows = 4, wide_bytes = 16, narrow_bytes = 16;
#else
constexpr std::size_t block_rows = 8, wide_bytes = 64, narrow_bytes = 32;
#endif

// Where a[i, k] lies: a[i * row + k * col] (row-major [R, K]: {K, 1}; stored as [K, R]: {1, R}).
struct Strides {
    std::size_t row, col;
};

// One block: out[0 .. rows, 0 .. vectors] += a[rows, K] @ b[K, 0 .. vectors], the sums
// held in block_rows x `vectors` vector registers while k runs.
template <std::size_t bytes, std::size_t vectors, typename Real>
void block(const Real* a, Strides a_at, const Real* b, Real* out, std::size_t K, std::size_t N) {
    using Vector = Lanes<Real, bytes>;
    constexpr std::size_t width = bytes / sizeof(Real);
    Vector sum[block_rows][vectors];
    for (std::size_t i = 0; i < block_rows; ++i)
        for (std::size_t v = 0; v < vectors; ++v) std::memcpy(&sum[i][v], out + i * N + v * width, sizeof(Vector));
    for (std::size_t k = 0; k < K; ++k) {
        Vector b_k[vectors];
        for (std::size_t v = 0; v < vectors; ++v) std::memcpy(&b_k[v], b + k * N + v * width, sizeof(Vector));
        for (std::size_t i = 0; i < block_rows; ++i) {
            const Real a_ik = a[i * a_at.row + k * a_at.col];
            for (std::size_t v = 0; v < vectors; ++v) sum[i][v] += a_ik * b_k[v];
        }
    }
    for (std::size_t i = 0; i < block_rows; ++i)
        for (std::size_t v = 0; v < vectors; ++v) std::memcpy(out + i * N + v * width, &sum[i][v], sizeof(Vector));
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
    constexpr std::size_t wide = wide_bytes / sizeof(Real), narrow = narrow_bytes / sizeof(Real);
    const Strides a_at = a_transposed ? Strides{1, R} : Strides{K, 1};
    const std::size_t full_rows = R - R % block_rows;
    for (std::size_t r = 0; r < R; r += block_rows) {
        const Real* a_rows = a + r * a_at.row;
        Real* out_rows = out + r * N;
        if (r == full_rows) {  // the last, partial block of rows
            edge_block(a_rows, a_at, b, out_rows, R - r, N, K, N);
            break;
        }
        // Columns two wide vectors at a time, then one, then one narrow (a head's 8
        // channels), then lane by lane. Measured natively on the tiny model's training
        // step: 64-byte vectors alone cost width 32 a quarter (its 8-channel heads fell
        // to the lane-by-lane loop); 32-byte alone cost width 64 a third.
        std::size_t n = 0;
        for (; n + 2 * wide <= N; n += 2 * wide) block<wide_bytes, 2>(a_rows, a_at, b + n, out_rows + n, K, N);
        for (; n + wide <= N; n += wide) block<wide_bytes, 1>(a_rows, a_at, b + n, out_rows + n, K, N);
        for (; n + narrow <= N; n += narrow) block<narrow_bytes, 1>(a_rows, a_at, b + n, out_rows + n, K, N);
        if (n < N) edge_block(a_rows, a_at, b + n, out_rows + n, block_rows, N - n, K, N);
    }
}

template void matmul_accumulate(const float*, bool, const float*, float*, std::size_t, std::size_t, std::size_t);
template void matmul_accumulate(const double*, bool, const double*, double*, std::size_t, std::size_t, std::size_t);

}  // namespace anatomy
