// The native build without CUDA: attn probe --device cuda is refused with one line.
#include "cuda/gpu_probe.hpp"
#include "cuda/gpu_verify.hpp"

namespace anatomy::native {

ProbeResult run_probe_on_gpu(int device, const PretrainedModel&, const LlamaTokenizer&, const ProbeRequest&) {
    require_gpu_device(device);
    return {};
}

}  // namespace anatomy::native
