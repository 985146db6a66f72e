// A weight matrix used where it lies: rows x cols, row-major, in the precision the
// checkpoint stores (F32, F16 or BF16, little-endian), over bytes owned elsewhere
// (a memory-mapped file natively). Hugging Face stores a projection [out, in], so
// row j holds output j's weights and a projection is one dot product per row.
#pragma once

#include <cstdint>

#include "../checkpoint/safetensors.hpp"
#include "../checkpoint/tensor_views.hpp"
#include "../parallel.hpp"
#include "../tensor.hpp"

namespace anatomy {

struct WeightView {
    const std::uint8_t* bytes = nullptr;  // rows * cols * dtype_size(dtype) bytes
    DType dtype = DType::f32;
    std::size_t rows = 0, cols = 0;

    std::size_t elements() const { return rows * cols; }
    std::size_t size_bytes() const { return elements() * dtype_size(dtype); }
    // Row j widened to float32 (exact for every dtype). Points into the bytes when
    // they are aligned float32; otherwise fills `buffer` (cols floats) and returns it.
    const float* row(std::size_t j, float* buffer) const;
};

// A source's tensor as a matrix where it lies ([rows, cols], or [n] as 1 x n); throws
// InputError naming it for another rank, or on a big-endian machine.
WeightView weight_view(const TensorView& tensor);
// The same for one tensor of a parsed safetensors file.
WeightView weight_view(const SafetensorsView& file, const std::string& name);

// A bias-free projection with the weight in checkpoint layout:
//   x: [B, T, in], w: [out, in]  ->  y: [B, T, out],  y[r, j] = sum_i x[r, i] * w[j, i]
// Each weight row is read (and widened) once and used for every one of the B*T input
// rows, so a pass reads the weights once whatever T is. Each dot product keeps 32
// partial sums (lane k takes i = k mod 32) combined in a fixed order, so y[r, j]
// does not depend on how many rows are computed together: a token gives the same
// bits in a full pass and in a one-token decode step. `parallel` splits the output
// rows j; each is computed the same way, so the result is the same for any split.
Tensor3<float> project(const Tensor3<float>& x, const WeightView& w, const ParallelFor& parallel = {});

// Embedding lookup from a table in checkpoint layout.
//   table: [V, D], ids: [B, T]  ->  [B, T, D]; throws InputError for an id outside [0, V).
Tensor3<float> embed_rows(const WeightView& table, const TokenIds& ids);

}  // namespace anatomy
