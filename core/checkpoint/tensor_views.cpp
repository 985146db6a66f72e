#include "tensor_views.hpp"

#include <cstring>

namespace anatomy {

std::size_t TensorView::elements() const {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
}

std::vector<float> read_floats(const TensorView& tensor) { return decode_values(tensor.bytes, tensor.dtype, tensor.elements()); }

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the stored bits are read in the host's order");

// A stored float is NaN or infinite when every bit of its exponent is set. Counts
// those among the n values of `Bits` at `bytes` and sets `first` to the first one's index.
template <typename Bits>
std::size_t count_non_finite(const std::uint8_t* bytes, std::size_t n, Bits exponent, std::size_t& first) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Bits bits;
        std::memcpy(&bits, bytes + i * sizeof(Bits), sizeof(Bits));
        if ((bits & exponent) != exponent) continue;
        if (count++ == 0) first = i;
    }
    return count;
}

std::size_t count_non_finite(const TensorView& tensor, std::size_t& first) {
    switch (tensor.dtype) {
        case DType::f32: return count_non_finite<std::uint32_t>(tensor.bytes, tensor.elements(), 0x7F800000u, first);
        case DType::f16: return count_non_finite<std::uint16_t>(tensor.bytes, tensor.elements(), 0x7C00u, first);
        case DType::bf16: return count_non_finite<std::uint16_t>(tensor.bytes, tensor.elements(), 0x7F80u, first);
        case DType::f64: return count_non_finite<std::uint64_t>(tensor.bytes, tensor.elements(), 0x7FF0000000000000ull, first);
    }
    return 0;
}

}  // namespace

std::optional<NonFinite> non_finite_weights(const TensorViews& tensors) {
    std::optional<NonFinite> found;
    std::size_t total = 0;
    for (const TensorView& tensor : tensors) {
        std::size_t first = 0;
        const std::size_t count = count_non_finite(tensor, first);
        if (count && !found) {
            const double value = decode_doubles(tensor.bytes + first * dtype_size(tensor.dtype), tensor.dtype, 1)[0];
            found = NonFinite{tensor.name, unravel_index(first, tensor.shape), value, 0};
        }
        total += count;
    }
    if (found) found->count = total;
    return found;
}

}  // namespace anatomy
