// Comparing a learner's output with the expected one: elementwise
// |got - expected| <= atol + rtol * |expected|. A value that is NaN or infinite on
// either side never passes (an infinite error), not even against the same value.
#pragma once

#include "values.hpp"

namespace anatomy::judge {

// Why these values: both sides compute in float64 (JavaScript numbers), and two
// correct programs that only sum in a different order differ by ~1e-14 relative
// at these sizes. rtol = 1e-6 leaves eight orders of magnitude for that, while
// every diagnosed mistake moves outputs by 1e-3 or more on at least one case
// (cases are built so that, e.g., eps = 0.5 exposes "eps outside the sqrt").
// atol = 1e-9 keeps values that should be exactly 0 (masked, or 0 * v) honest.
struct Tolerance {
    double atol = 1e-9;
    double rtol = 1e-6;
};

struct Comparison {
    bool passed = false;
    // Empty when passed; else "shape", "type", "missing", "nonfinite" or "mismatch".
    std::string problem;
    json details;  // what the page shows: shapes, positions, errors, the first mismatch
};

// `expected` is an array (nested lists), a number, or an object of those; `got` is
// whatever the learner returned, already converted to JSON.
Comparison compare(const json& expected, const json& got, const Tolerance& tolerance);

// True when two values agree within the tolerance, NaN matching NaN and an infinity
// the same infinity (for diagnosis: a mistake that produces NaN is matched by a
// learner who produces the same NaN; it never makes an output pass).
bool agrees(const json& a, const json& b, const Tolerance& tolerance);

}  // namespace anatomy::judge
