#include "cuda/attention_mask_spec.hpp"

#include "tensor.hpp"

namespace anatomy::gpu {

GpuMask gpu_mask_from_spec(const MaskSpec& spec) {
    require_valid(spec);
    const long long history = spec.S - spec.T;  // query row 0 sits at absolute position S - T
    switch (spec.kind) {
        case MaskKind::full: return {GpuMaskKind::full, history, 0, 0};
        case MaskKind::causal: return {GpuMaskKind::causal, history, 0, 0};
        case MaskKind::sliding_window: return {GpuMaskKind::sliding_window, history, spec.window, 0};
        case MaskKind::sink_window: return {GpuMaskKind::sink_window, history, spec.window, spec.sinks};
        default:
            throw InputError("the GPU kernels implement full, causal, sliding_window and sink_window masks, not " +
                             mask_kind_name(spec.kind));
    }
}

}  // namespace anatomy::gpu
