// From the core's mask description to the GPU kernels' predicate. Host code,
// no CUDA: tests/cuda/test_gpu_masks.cpp checks it (and the predicates) against
// core/masks.cpp on any machine.
#pragma once

#include "cuda/attention_mask.hpp"
#include "masks.hpp"

namespace anatomy::gpu {

// full, causal, sliding_window and sink_window; throws InputError for the others.
GpuMask gpu_mask_from_spec(const MaskSpec& spec);

}  // namespace anatomy::gpu
