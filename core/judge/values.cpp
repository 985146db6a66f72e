#include "values.hpp"

#include <cmath>
#include <limits>

#include "../tensor.hpp"

namespace anatomy::judge {
namespace {

double number_from_json(const json& value, const std::string& what) {
    if (value.is_number()) return value.get<double>();
    if (value.is_string()) {
        const std::string text = value.get<std::string>();
        if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
        if (text == "Infinity") return std::numeric_limits<double>::infinity();
        if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    }
    // Quote at most a line of the offending value: a learner may have returned a whole row here.
    std::string shown = value.dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    throw InputError(what + " holds " + shown + ", which is not a number");
}

json number_to_json(double x) {
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
    return x;
}

// Depth-first: the shape is read off the first element at each level, then every
// element must agree with it.
void collect(const json& value, std::size_t depth, std::vector<std::size_t>& shape, std::vector<double>& data,
             const std::string& what) {
    if (!value.is_array()) {
        if (depth != shape.size()) throw InputError(what + " is ragged: a number where a list was expected");
        data.push_back(number_from_json(value, what));
        return;
    }
    if (depth == shape.size()) {
        if (!data.empty()) throw InputError(what + " is ragged: a list where a number was expected");
        shape.push_back(value.size());
    } else if (value.size() != shape[depth]) {
        throw InputError(what + " is ragged: a list of " + std::to_string(value.size()) + " at depth " + std::to_string(depth) +
                         " where the first has " + std::to_string(shape[depth]));
    }
    if (value.empty()) return;
    for (const json& item : value) collect(item, depth + 1, shape, data, what);
}

}  // namespace

Nd nd_from_json(const json& value, const std::string& what) {
    std::vector<std::size_t> shape;
    std::vector<double> data;
    collect(value, 0, shape, data, what);
    std::size_t count = 1;
    for (std::size_t d : shape) count *= d;
    if (count != data.size()) throw InputError(what + " is ragged");
    Nd out(shape);
    std::copy(data.begin(), data.end(), out.begin());
    return out;
}

json nd_to_json(const Nd& array) {
    if (array.dimension() == 0) return number_to_json(array());
    std::vector<std::size_t> shape(array.shape().begin(), array.shape().end());
    // Build nested lists from the row-major data.
    std::function<json(std::size_t, std::size_t)> nest = [&](std::size_t axis, std::size_t offset) {
        json out = json::array();
        std::size_t stride = 1;
        for (std::size_t i = axis + 1; i < shape.size(); ++i) stride *= shape[i];
        for (std::size_t i = 0; i < shape[axis]; ++i) {
            if (axis + 1 == shape.size()) out.push_back(number_to_json(array.data()[offset + i]));
            else out.push_back(nest(axis + 1, offset + i * stride));
        }
        return out;
    };
    return nest(0, 0);
}

}  // namespace anatomy::judge
