// Attention for a single query, written as the "soft lookup" it is: compare the
// query with every key, turn the scores into weights, mix the values.
#pragma once

#include "../tensor.hpp"

namespace anatomy {

struct SoftLookup {
    Vector<double> scores;   // [N]   scale * query . key_n
    Vector<double> weights;  // [N]   softmax(scores)
    Vector<double> mixed;    // [Dv]  sum_n weights_n * value_n
};

//   query: [Dk], keys: [N, Dk], values: [N, Dv], scale > 0 (1/sqrt(Dk) in attention;
//   larger sharpens the weights towards a hard lookup, smaller flattens them).
SoftLookup soft_lookup(const Vector<double>& query, const Matrix<double>& keys, const Matrix<double>& values, double scale);

}  // namespace anatomy
