// The probe's passes on the GPU (see gpu_probe.hpp).
#include "cuda/gpu_probe.hpp"

#include <algorithm>

#include "cuda/gpu_backend.hpp"
#include "cuda/gpu_runtime.hpp"
#include "cuda/gpu_verify.hpp"

namespace anatomy::native {
ProbeResult run_probe_on_gpu(int device, const PretrainedModel& model, const LlamaTokenizer& tokenizer,
                             const ProbeRequest& request) {
    require_gpu_device(device);
    const gpu::GpuRuntime runtime(device);
    const int capacity = int(request.ids.size()) + std::max(request.generate, 0);
    const gpu::GpuModel uploaded = gpu::upload_model(model);
    gpu::GpuBackend backend(runtime, uploaded, capacity);
    ProbeResult result = run_probe(model, tokenizer, request, backend);
    result.gpu = gpu::gpu_info_to_json(runtime.info());
    result.precision_note =
        model.precision == WeightPrecision::float32
            ? "on the GPU: weights widened to float32 and uploaded in their [out, in] layout; float32 throughout "
              "(cuBLAS SGEMM without TF32, float32 KV cache)"
            : "on the GPU: weights rounded to bfloat16 once, then held as float32 (the same values); activations, "
              "accumulation, softmax and the KV cache in float32";
    return result;
}

}  // namespace anatomy::native
