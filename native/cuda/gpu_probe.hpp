// attn probe --device cuda[:N]: the probe's passes (core/pretrained/probe.hpp) on
// the GPU forward, over the checkpoint's weights uploaded as float32 in their own
// [out, in] layout. The full pass runs eager attention (it keeps the
// probabilities the trace records); one-token steps run the decode kernel
// (gpu_backend.hpp: the GPU forward as the core's Backend).
// Implemented by gpu_probe.cpp in the cuda build and by gpu_probe_none.cpp
// otherwise (which refuses with one line).
#pragma once

#include "pretrained/probe.hpp"

namespace anatomy::native {

// The probe's result from device `device`, with result.gpu (the GPU's name,
// compute capability, memory, driver and runtime versions) and the GPU's
// precision note filled in. Throws InputError when this build has no CUDA or
// there is no such device, CudaError when a CUDA call fails.
ProbeResult run_probe_on_gpu(int device, const PretrainedModel& model, const LlamaTokenizer& tokenizer,
                             const ProbeRequest& request);

}  // namespace anatomy::native
