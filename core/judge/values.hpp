// The values an exercise takes and returns, as the judge sees them: n-dimensional
// arrays of doubles (JavaScript numbers are doubles), or objects of named arrays.
//
// JSON cannot hold NaN or infinities, so both directions spell them as the
// strings "NaN", "Infinity" and "-Infinity" (web/src/exercises/codec.mjs does the same).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <xtensor/xarray.hpp>

#include "../tensor.hpp"

namespace anatomy::judge {

using Nd = xt::xarray<double>;
using nlohmann::json;

// A nested list of numbers (rectangular) as an array; a bare number is 0-dimensional.
// Throws InputError saying where the list is ragged or holds something else.
Nd nd_from_json(const json& value, const std::string& what);
json nd_to_json(const Nd& array);

// Shape as text, e.g. "[2, 3, 5]": the core's one formatter (tensor.hpp).
using anatomy::shape_text;

}  // namespace anatomy::judge
