// Any xtensor expression as nested JSON arrays: a [2, 3] tensor becomes [[a, b, c], [d, e, f]].
#pragma once

#include <nlohmann/json.hpp>
#include <xtensor/xtensor.hpp>

namespace anatomy {
namespace detail {

template <typename T, typename Shape>
nlohmann::json nest(const T* data, const Shape& shape, std::size_t axis) {
    nlohmann::json out = nlohmann::json::array();
    std::size_t stride = 1;
    for (std::size_t i = axis + 1; i < shape.size(); ++i) stride *= shape[i];
    for (std::size_t i = 0; i < shape[axis]; ++i) {
        if (axis + 1 == shape.size()) out.push_back(data[i]);
        else out.push_back(nest(data + i * stride, shape, axis + 1));
    }
    return out;
}

}  // namespace detail

template <typename E>
nlohmann::json to_nested_json(const E& tensor) {
    const auto evaluated = xt::eval(tensor);  // contiguous, row-major
    return detail::nest(evaluated.data(), evaluated.shape(), 0);
}

}  // namespace anatomy
