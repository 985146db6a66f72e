// Validation before timing: a kernel's output against the core's reference
// attention, computed in fp64, on sampled query rows.
//
// Why rows: the reference materialises [B, Hq, T, S] three times, which at the
// bench's T = 4096 is gigabytes and minutes. Query row t of causal attention sees
// keys 0 .. t + history and nothing else, so the reference run on
// (q[:, :, t], k[:, :, :n], v[:, :, :n]) with T = 1, S = n = t + history + 1 gives
// row t exactly as the full reference would (the masked cells it skips add exact
// zeros there). Sampled rows: the first, the last and evenly spaced ones between.
//
// Tolerance: the harness's one rule (harness.hpp), with the fp32 reference as
// the same-precision implementation and the CPU's floor:
//   max |kernel - fp64| <= 2 x max |fp32 reference - fp64| on the same rows + 1e-6
#pragma once

#include <functional>
#include <vector>

#include "../tensor.hpp"

namespace anatomy {

struct ReferenceRows {
    std::vector<std::size_t> rows;        // the sampled query positions t
    std::vector<Tensor4<double>> fp64;    // per t: [B, Hq, 1, dh], the reference in fp64
    double fp32_error = 0;                // max |fp32 reference - fp64 reference| over those rows
};

// The reference (attention_reference, grouped) on up to `max_rows` sampled rows,
// in fp64 and fp32.   q: [B, Hq, T, dh], k, v: [B, Hkv, S, dh]
ReferenceRows reference_rows(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                             std::size_t max_rows = 16);

struct Validation {
    bool passed = false;
    double max_error = 0;        // max |kernel - fp64 reference| over the sampled rows
    double reference_error = 0;  // the fp32 reference's own error on those rows
    double tolerance = 0;        // attention_tolerance(reference_error, kCpuToleranceFloor)
    std::size_t rows_checked = 0;
};

// out: [B, Hq, T, dh], the kernel's output for the inputs `reference` was made from.
// A NaN or infinity anywhere in the checked rows fails.
Validation validate_rows(const Tensor4<float>& out, const ReferenceRows& reference);

}  // namespace anatomy
