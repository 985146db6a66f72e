// The one comparison every check, test and implementation-against-core report
// uses: the largest absolute difference between two arrays of the same shape.
#pragma once

#include <algorithm>
#include <cmath>

namespace anatomy {

// max |a - b| over every element, in double. Arrays of different shapes, or a
// NaN anywhere in the difference, give infinity: they can never pass a tolerance.
// Works for xtensor containers and views (anything with shape(), begin(), end()).
template <typename A, typename B>
double max_abs_diff(const A& a, const B& b) {
    if (a.shape().size() != b.shape().size() || !std::equal(a.shape().begin(), a.shape().end(), b.shape().begin()))
        return INFINITY;
    double worst = 0;
    auto ia = a.begin();
    for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) {
        const double d = std::abs(double(*ia) - double(*ib));
        if (std::isnan(d)) return INFINITY;
        worst = std::max(worst, d);
    }
    return worst;
}

// max |x| over every element (the scale a tolerance is relative to).
template <typename A>
double max_abs(const A& a) {
    double worst = 0;
    for (auto x : a) worst = std::max(worst, std::abs(double(x)));
    return worst;
}

}  // namespace anatomy
