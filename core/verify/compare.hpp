// The one comparison every check, test and implementation-against-core report
// uses: the largest absolute difference between two arrays of the same shape.
//
// A value that is not finite (NaN, +inf, -inf) on either side is an infinite error:
// NaN compares false with everything, so a plain std::max would silently drop it
// and a model that computes nothing but NaN would pass every tolerance.
#pragma once

#include <algorithm>
#include <cmath>

namespace anatomy {

// The larger of two errors; NaN (an error that could not be measured) counts as infinite.
inline double worse_error(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return INFINITY;
    return std::max(a, b);
}

// max |a - b| over every element, in double. Arrays of different shapes, or a value
// that is not finite on either side, give infinity: they can never pass a tolerance.
// Works for xtensor containers and views (anything with shape(), begin(), end()).
template <typename A, typename B>
double max_abs_diff(const A& a, const B& b) {
    if (a.shape().size() != b.shape().size() || !std::equal(a.shape().begin(), a.shape().end(), b.shape().begin()))
        return INFINITY;
    double worst = 0;
    auto ia = a.begin();
    for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) {
        const double x = double(*ia), y = double(*ib);
        if (!std::isfinite(x) || !std::isfinite(y)) return INFINITY;
        worst = std::max(worst, std::abs(x - y));
    }
    return worst;
}

// max |x| over every element (the scale a tolerance is relative to); infinity when
// any element is not finite.
template <typename A>
double max_abs(const A& a) {
    double worst = 0;
    for (auto x : a) worst = worse_error(worst, std::abs(double(x)));
    return worst;
}

}  // namespace anatomy
