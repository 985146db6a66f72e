// Attention kernels that run outside the core, on a device the core cannot call
// (the page's WebGPU kernels, web/src/gpu/), checked by the core all the same: the
// core names the cases, makes each case's inputs, and compares what the device
// returned with its own reference. The host only runs the kernels in between, so
// the checks are written once, here, whatever the device.
//
//   kernel_cases()                  every case: its shape, mask, sinks and seed
//   kernel_inputs(case)             q, k, v, the sink logits and each query row's visible keys
//   check_kernel_output(case, ...)  the kernel's output (and probabilities, if it
//                                   writes them) against the reference
//   check_tile_record(case, ...)    a flash kernel's record of the tiles it computed
//                                   and of one row's running maximum and sum, against
//                                   the core's tile rule and softmax
//   figure_case(shape, mask)        a case of the page's choosing (the notebook's figures)
//   check_kernel_sample(case, ...)  the output on a sample of rows, for sizes whose whole
//                                   reference would take long
//
// Tolerance (core/bench/harness.hpp's one rule, the GPU's floor): against the fp64
// reference, a kernel may be off by twice what the fp32 reference is off on the same
// inputs, plus one rounding of the output, 4 x 2^-23 x max |reference|. A value that
// is not finite anywhere is an infinite error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../masks.hpp"
#include "../model/decoder_layer.hpp"
#include "checks.hpp"

namespace anatomy {

// q: [B, Hq, T, D]; k, v: [B, Hkv, S, D]; out: [B, Hq, T, D]. The T queries are the
// newest tokens, at absolute positions S - T .. S - 1.
struct KernelShape {
    std::int64_t B = 1, Hq = 1, Hkv = 1, T = 1, S = 1, D = 1;
};

struct KernelCase {
    std::string id;       // e.g. "tiny-causal"
    std::string what;     // in words
    KernelShape shape;
    MaskSpec mask;        // mask.T == shape.T, mask.S == shape.S
    bool sinks = false;   // a learned sink logit per query head
    // A query row that sees no key at all (as a padding query would), its ranges
    // emptied after the mask's; -1 for none.
    std::int64_t blind_row = -1;
    std::uint64_t seed = 1;
    bool decode() const { return shape.T == 1; }
};

// The cases every kernel runs: the tiny preset, TinyLlama's group of 8 at head size
// 64, sizes off every tile size, every mask kind, a KV offset, a fully masked row,
// with and without sinks; then decode cases (T = 1) over long caches.
const std::vector<KernelCase>& kernel_cases();
const KernelCase& kernel_case(const std::string& id);  // throws InputError for an unknown id

// A case of the page's choosing, id "figure": the notebook's flash-tile figure (one head
// over the mask gallery's mask) and its cost figure (a causal mask at growing sizes). No
// sinks, no blind row; the seed follows the shape. Throws InputError for a mask that
// does not fit the shape or a shape whose query heads do not divide among its KV heads.
KernelCase figure_case(const KernelShape& shape, const MaskSpec& mask);

struct KernelInputs {
    std::vector<float> q, k, v;         // N(0, 1) from SplitMix64(seed): q, then k and v
    std::vector<float> sinks;           // [Hq] N(0, 1) + 1, or empty
    // [T, 4]: query row t sees keys [r0, r1) and [r2, r3) (core/masks.hpp's visible_keys;
    // an unused range is empty).
    std::vector<std::int32_t> ranges;
};
KernelInputs kernel_inputs(const KernelCase& kernel_case);

// The core's attention step for step (ops/attention.hpp): scores, mask, softmax with the
// sink logits when given, weighted sum; the reference the kernels are held to, and what
// stands in for a device's answer (device_attention_backend.hpp).
//   q: [B, Hq, T, D], k, v: [B, Hkv, S, D], allowed: [T, S], sinks: [Hq] or null
//   -> probs [B, Hq, T, S], heads [B, Hq, T, D]
template <typename Real>
AttentionResult<Real> masked_attention(const Tensor4<Real>& q, const Tensor4<Real>& k, const Tensor4<Real>& v,
                                       const Mask& allowed, const Vector<Real>* sinks);

// Each query row's visible keys as the kernels take them: [T, 4], row t seeing keys
// [r0, r1) and [r2, r3) (visible_keys's ranges; an unused one empty). Throws InputError
// for a spec mask_problem refuses.
std::vector<std::int32_t> visible_key_ranges(const MaskSpec& spec);

// Records, each named "<kernel> <case id>":
//   out_matches_core    max |out - fp64 reference| within the rule above
// and, when `probs` ([B, Hq, T, S]) is given:
//   probs_match_core    the same for the probabilities
//   hidden_cells_zero   every cell the mask hides exactly 0
//   rows_sum_as_core    every row's sum against the reference's (1, or 1 minus the sink's share), 1e-5
// An output of the wrong size is an infinite error.
std::vector<CheckRecord> check_kernel_output(const KernelCase& kernel_case, const std::string& kernel,
                                             const std::vector<float>& out, const std::vector<float>* probs);

// check_kernel_output's out_matches_core on `rows` query rows only (the first, the last
// and evenly spaced between, over every sequence and head), the references computed for
// those rows alone; the tolerance is the same rule on the sampled rows.
//   out_matches_core_sampled
std::vector<CheckRecord> check_kernel_sample(const KernelCase& kernel_case, const std::string& kernel,
                                             const std::vector<float>& out, std::int64_t rows);

// A flash kernel's tile record, as v1 flash writes it (kernel_tile_state below).
inline constexpr std::uint32_t kKernelTilePartial = 1;  // computed, the mask applied cell by cell
inline constexpr std::uint32_t kKernelTileSkipped = 2;  // never loaded
inline constexpr std::uint32_t kKernelTileFull = 3;     // computed without the mask: every cell visible
std::uint32_t kernel_tile_state(TileState state);

// A flash kernel's tile record for head (batch, head), query tiles of tile_q rows and
// key tiles of tile_k keys: `states` (rows x cols, row-major) as above;
// `trace` the (m, l) of query row `row` after each key tile, scores already scaled.
//   tiles_as_core       tiles whose state differs from classify_tiles (skipped, partial, full): 0
//   row_max_as_core     m after each key tile against online_softmax_steps' (fp64), 1e-5 relative
//   row_sum_as_core     l after each key tile against online_softmax_steps', 1e-5 relative
std::vector<CheckRecord> check_tile_record(const KernelCase& kernel_case, std::int64_t tile_q, std::int64_t tile_k,
                                           std::int64_t batch, std::int64_t head, std::int64_t row,
                                           const std::vector<std::uint32_t>& states, const std::vector<float>& trace);

}  // namespace anatomy
