// The native build without CUDA: --device cuda is refused with one clear line.
#include "cuda/gpu_verify.hpp"

namespace anatomy::native {

void require_gpu_device(int index) {
    throw InputError("--device cuda:" + std::to_string(index) +
                     ": this build has no CUDA support (configure and build with the cuda preset)");
}

int run_verify_on_gpu(const Model<float>&, const TokenIds&, const GpuVerifyRequest& request) {
    require_gpu_device(request.device);
    return 2;
}

}  // namespace anatomy::native
