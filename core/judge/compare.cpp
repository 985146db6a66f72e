#include "compare.hpp"

#include <cmath>

#include "../tensor.hpp"

namespace anatomy::judge {
namespace {

// Index of flat position `i` in an array of `shape`, as text: "[1, 0, 3]".
std::string index_text(std::size_t i, const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> index(shape.size());
    for (std::size_t axis = shape.size(); axis-- > 0;) {
        index[axis] = shape[axis] ? i % shape[axis] : 0;
        i = shape[axis] ? i / shape[axis] : 0;
    }
    return shape_text(index);
}

json number(double x) { return nd_to_json(Nd(x)); }

bool within(double got, double expected, const Tolerance& tol) {
    return std::abs(got - expected) <= tol.atol + tol.rtol * std::abs(expected);
}

// How a value that is not finite counts: a learner's output is never right with one,
// on either side; a mistake's output is reproduced by the learner's when both hold
// the same NaN or infinity there (a mistake that overflows is matched by a learner
// whose code overflows the same way).
enum class NonFiniteRule { never_agrees, same_value_agrees };

Comparison compare_arrays(const json& expected_json, const json& got_json, const Tolerance& tol, const std::string& field,
                          NonFiniteRule rule) {
    Comparison c;
    const Nd expected = nd_from_json(expected_json, "expected");
    Nd got;
    try {
        got = nd_from_json(got_json, field.empty() ? "the result" : field);
    } catch (const InputError& e) {
        c.problem = "type";
        c.details = {{"message", std::string(e.what()) + "; expected an array of shape " +
                                     shape_text({expected.shape().begin(), expected.shape().end()})}};
        return c;
    }
    const std::vector<std::size_t> es(expected.shape().begin(), expected.shape().end()), gs(got.shape().begin(), got.shape().end());
    if (es != gs) {
        c.problem = "shape";
        c.details = {{"expected_shape", es}, {"got_shape", gs},
                     {"message", "shape " + shape_text(gs) + ", expected " + shape_text(es)}};
        return c;
    }
    json nonfinite = json::array();
    std::size_t nonfinite_count = 0;
    double max_abs = 0, max_rel = 0;
    std::ptrdiff_t first = -1;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = got.data()[i], e = expected.data()[i];
        const bool finite = std::isfinite(g) && std::isfinite(e);
        if (!finite) {
            if (nonfinite.size() < 5) nonfinite.push_back({{"index", index_text(i, gs)}, {"value", number(g)}});
            ++nonfinite_count;
        }
        const bool ok = finite ? within(g, e, tol)
                               : rule == NonFiniteRule::same_value_agrees && (std::isnan(g) ? std::isnan(e) : g == e);
        if (!ok && first < 0) first = std::ptrdiff_t(i);
        if (std::isfinite(g) && std::isfinite(e)) {
            const double abs_error = std::abs(g - e);
            max_abs = std::max(max_abs, abs_error);
            if (e != 0) max_rel = std::max(max_rel, abs_error / std::abs(e));
        }
    }
    c.passed = first < 0;
    c.details = {{"max_abs_error", max_abs}, {"max_rel_error", max_rel}};
    if (c.passed) return c;
    c.problem = nonfinite_count ? "nonfinite" : "mismatch";
    c.details["first_mismatch"] = {{"index", index_text(std::size_t(first), gs)},
                                   {"expected", number(expected.data()[first])},
                                   {"got", number(got.data()[first])}};
    if (nonfinite_count) {
        c.details["nonfinite"] = nonfinite;
        c.details["nonfinite_count"] = nonfinite_count;
    }
    return c;
}

Comparison compare(const json& expected, const json& got, const Tolerance& tol, NonFiniteRule rule) {
    if (!expected.is_object()) return compare_arrays(expected, got, tol, "", rule);
    Comparison c;
    if (!got.is_object()) {
        c.problem = "type";
        c.details = {{"message", "expected an object with fields " + [&] {
                          std::string names;
                          for (const auto& [key, value] : expected.items()) names += (names.empty() ? "" : ", ") + key;
                          return names;
                      }() + ", got " + std::string(got.type_name())}};
        return c;
    }
    c.passed = true;
    json fields = json::object();
    for (const auto& [key, value] : expected.items()) {
        if (!got.contains(key)) {
            c.passed = false;
            c.problem = "missing";
            c.details = {{"field", key}, {"message", "the result has no field '" + key + "'"}};
            return c;
        }
        Comparison part = compare_arrays(value, got[key], tol, "field '" + key + "'", rule);
        fields[key] = part.details;
        if (!part.passed && c.passed) {
            c.passed = false;
            c.problem = part.problem;
            c.details = part.details;
            c.details["field"] = key;
        }
    }
    if (c.passed) c.details = {{"fields", fields}};
    return c;
}

}  // namespace

Comparison compare(const json& expected, const json& got, const Tolerance& tol) {
    return compare(expected, got, tol, NonFiniteRule::never_agrees);
}

bool agrees(const json& a, const json& b, const Tolerance& tol) {
    try {
        return compare(a, b, tol, NonFiniteRule::same_value_agrees).passed;
    } catch (const InputError&) {
        return false;
    }
}

}  // namespace anatomy::judge
