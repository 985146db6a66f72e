#include "weight_view.hpp"

#include <array>
#include <cstring>

namespace anatomy {
namespace {

// float16 -> float32 for all 65,536 bit patterns (256 KiB, built once).
const float* half_table() {
    static const std::array<float, 65536>* table = [] {
        auto* t = new std::array<float, 65536>;
        for (std::size_t bits = 0; bits < t->size(); ++bits) (*t)[bits] = half_to_float(std::uint16_t(bits));
        return t;
    }();
    return table->data();
}

bool little_endian() {
    const std::uint16_t one = 1;
    std::uint8_t first;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

// Partial sums per dot product. 32 independent accumulators keep the vector unit
// busy (four AVX2 or two AVX-512 registers natively); measured on this project's 2-core EPYC
// build machine, one bf16 weight row widened then dotted with 1 / 20 input rows
// (in = 2048, CPU time, 3 runs): 8 lanes 2.6 / 3.0 GMAC/s (a single FMA chain
// waits on its own latency), 16 lanes 3.0 / 10.6, 32 lanes 5.4 / 14.5, 64 lanes 5.0 / 13.8.
// The SSE2-only build gets about 3.6 / 8.4 with 32 lanes.
constexpr std::size_t lanes = 32;

// Eight lanes as one value (GCC's and clang's vector extension): one AVX register
// natively, two v128 in wasm. Written out as four named accumulators, the 32 lanes
// stay in registers in the wasm build too, where the array form kept them in memory
// (the projections of a 256-token stories260K pass took 30 of its 62 ms).
typedef float Lanes8 __attribute__((vector_size(32)));

Lanes8 load8(const float* p) {
    Lanes8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// y[r * y_stride] = x[r, :] . w_row for r in [0, rows): x is [rows, n], w_row is [n].
// Lane k sums the products i = k (mod 32): lanes 0-7 in acc0, 8-15 in acc1, 16-23
// in acc2, 24-31 in acc3. The lanes are then added pairwise (k with k + 16, then
// k + 8, ...), a fixed order whatever rows is.
void dot_rows(const float* x, std::size_t rows, std::size_t n, const float* w_row, float* y, std::size_t y_stride) {
    static_assert(lanes == 32, "four accumulators of eight lanes");
    for (std::size_t r = 0; r < rows; ++r) {
        const float* a = x + r * n;
        Lanes8 acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
        std::size_t i = 0;
        for (; i + lanes <= n; i += lanes) {
            acc0 += load8(a + i) * load8(w_row + i);
            acc1 += load8(a + i + 8) * load8(w_row + i + 8);
            acc2 += load8(a + i + 16) * load8(w_row + i + 16);
            acc3 += load8(a + i + 24) * load8(w_row + i + 24);
        }
        float tail = 0;
        for (; i < n; ++i) tail += a[i] * w_row[i];
        acc0 += acc2;  // lanes k += k + 16
        acc1 += acc3;
        acc0 += acc1;  // lanes k += k + 8
        float lane[8];
        std::memcpy(lane, &acc0, sizeof lane);
        for (std::size_t half = 4; half > 0; half /= 2)
            for (std::size_t k = 0; k < half; ++k) lane[k] += lane[k + half];
        y[r * y_stride] = lane[0] + tail;
    }
}

// The widening loops take their length as a value: read through `this` inside the
// loop, cols would have to be reloaded after every store (the buffer might alias
// it), which keeps the loop scalar and made decoding three times slower.
void widen_bf16(const std::uint8_t* p, std::size_t n, float* out) {
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        const std::uint32_t bits = std::uint32_t(h) << 16;  // bf16 is the top half of a float32
        std::memcpy(out + i, &bits, 4);
    }
}

void widen_f16(const std::uint8_t* p, std::size_t n, float* out) {
    const float* table = half_table();
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = table[h];
    }
}

}  // namespace

const float* WeightView::row(std::size_t j, float* buffer) const {
    const std::size_t n = cols;
    const std::uint8_t* p = bytes + j * n * dtype_size(dtype);
    switch (dtype) {
        case DType::f32:
            if (reinterpret_cast<std::uintptr_t>(p) % alignof(float) == 0) return reinterpret_cast<const float*>(p);
            std::memcpy(buffer, p, n * sizeof(float));
            return buffer;
        case DType::bf16: widen_bf16(p, n, buffer); return buffer;
        case DType::f16: widen_f16(p, n, buffer); return buffer;
        case DType::f64: break;  // never a weight: refused where the views are made (safetensors_views.cpp)
    }
    return buffer;
}

WeightView weight_view(const TensorView& tensor) {
    if (!little_endian()) throw InputError("reading weights in place needs a little-endian machine");
    if (tensor.shape.empty() || tensor.shape.size() > 2)
        throw InputError("tensor '" + tensor.name + "' has " + std::to_string(tensor.shape.size()) + " dimensions, expected 1 or 2");
    WeightView view;
    view.bytes = tensor.bytes;
    view.dtype = tensor.dtype;
    view.rows = tensor.shape.size() == 2 ? tensor.shape[0] : 1;
    view.cols = tensor.shape.back();
    return view;
}

WeightView weight_view(const SafetensorsView& file, const std::string& name) { return weight_view(safetensors_view(file, name)); }

Tensor3<float> project(const Tensor3<float>& x, const WeightView& w, const ParallelFor& parallel) {
    const std::size_t rows = x.shape(0) * x.shape(1), in = x.shape(2), out = w.rows;
    if (w.cols != in) throw InputError("project: input width " + std::to_string(in) + " does not match the weight's " + std::to_string(w.cols));
    Tensor3<float> y({x.shape(0), x.shape(1), out});
    const auto outputs = [&](std::size_t begin, std::size_t end) {
        std::vector<float> buffer(in);
        for (std::size_t j = begin; j < end; ++j) {
            const float* w_row = w.row(j, buffer.data());  // [in], read once for all rows
            dot_rows(x.data(), rows, in, w_row, y.data() + j, out);
        }
    };
    if (parallel) parallel(out, outputs);
    else outputs(0, out);
    return y;
}

Tensor3<float> embed_rows(const WeightView& table, const TokenIds& ids) {
    const std::size_t V = table.rows, D = table.cols, B = ids.shape(0), T = ids.shape(1);
    Tensor3<float> x({B, T, D});
    std::vector<float> buffer(D);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t) {
            const std::int32_t id = ids(b, t);
            if (id < 0 || std::size_t(id) >= V)
                throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(V - 1) + "]");
            const float* row = table.row(std::size_t(id), buffer.data());
            std::copy(row, row + D, x.data() + (b * T + t) * D);
        }
    return x;
}

}  // namespace anatomy
