#include "device_query.hpp"

namespace anatomy::native {

bool cuda_compiled_in() { return false; }
std::vector<CudaDevice> cuda_devices() { return {}; }
std::string cuda_unavailable_reason() { return "this build was configured without CUDA"; }

}  // namespace anatomy::native
