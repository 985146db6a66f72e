// One query row of a kernel case, as FlashAttention's online softmax computes it:
// key tile by key tile, the running maximum m, the running sum l and the unnormalised
// output acc after each, in fp64, beside the plain softmax of the whole row at once.
// The notebook steps through these next to what the WebGPU flash kernel recorded
// (web/src/widgets/flash-tiles/), and check_tile_record holds the kernel's (m, l) to them.
//
// For tile j, holding keys [first, last) of which the row sees some, with scaled scores s:
//   m_j     = max(m_{j-1}, max_s s)
//   rescale = e^(m_{j-1} - m_j)                  (1 before any key is seen)
//   l_j     = l_{j-1} rescale + sum_s e^(s - m_j)
//   acc_j   = acc_{j-1} rescale + sum_s e^(s - m_j) v_s
// A tile the row sees nothing of leaves all three as they were. After the last tile
// out = acc / l (with a sink logit folded in first, as one more score without a value),
// which equals the plain softmax's sum_s p_s v_s, p_s = e^(s - M) / sum e^(s' - M).
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_cases.hpp"

namespace anatomy {

// One query row's attention at once, in precision Real (its dot products and softmax in
// Real, from the fp32 inputs): the plain softmax the steps end on, and what the sampled
// check (check_kernel_sample) holds a kernel's rows to in fp64 and fp32.
template <typename Real>
struct RowAttention {
    std::vector<Real> scores;  // [S] q . k / sqrt(D), -inf where the row does not see the key
    std::vector<Real> probs;   // [S] with the sink as one more score without a value, 0 where hidden
    std::vector<Real> out;     // [D] sum_s probs_s v_s
};

// Throws InputError for a sequence, head or row outside the case.
template <typename Real>
RowAttention<Real> row_attention(const KernelCase& kernel_case, const KernelInputs& inputs, std::int64_t batch,
                                 std::int64_t head, std::int64_t row);

struct OnlineSoftmaxStep {
    std::int64_t first = 0, last = 0;   // the tile's keys [first, last)
    std::int64_t visible = 0;           // how many of them the row sees
    double tile_max = 0;                // the largest visible score in the tile (-inf when none)
    double m = 0, l = 0;                // after the tile (m = -inf and l = 0 before any key is seen)
    double rescale = 1;                 // what the earlier l and acc were multiplied by
    std::vector<double> acc;            // [D] after the tile
};

struct OnlineSoftmaxRow {
    std::int64_t batch = 0, head = 0, row = 0, tile_k = 0;
    std::vector<double> scores;         // [S] q . k / sqrt(D), -inf where the row does not see the key
    double sink = 0;                    // the head's sink logit, -inf without sinks
    std::vector<OnlineSoftmaxStep> steps;  // one per key tile, ceil(S / tile_k)
    std::vector<double> probs;          // [S] the plain softmax of the whole row (row_attention), 0 where hidden
    std::vector<double> out;            // [D] sum_s probs_s v_s
};

// Throws InputError for a head or row outside the case, or tile_k < 1.
OnlineSoftmaxRow online_softmax_steps(const KernelCase& kernel_case, const KernelInputs& inputs, std::int64_t tile_k,
                                      std::int64_t batch, std::int64_t head, std::int64_t row);

}  // namespace anatomy
