#include "tensor_views.hpp"

namespace anatomy {

std::size_t TensorView::elements() const {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
}

std::vector<float> read_floats(const TensorView& tensor) { return decode_values(tensor.bytes, tensor.dtype, tensor.elements()); }

}  // namespace anatomy
