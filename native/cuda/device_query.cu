// Device enumeration through the CUDA runtime. No xtensor here: plain types only.
#include <cuda_runtime.h>

#include "device_query.hpp"

namespace anatomy::native {

bool cuda_compiled_in() { return true; }

std::vector<CudaDevice> cuda_devices() {
    std::vector<CudaDevice> devices;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky error so later calls start clean
        return devices;
    }
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem, driver, runtime});
    }
    return devices;
}

std::string cuda_unavailable_reason() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    cudaGetLastError();
    if (status != cudaSuccess) return cudaGetErrorString(status);
    return count == 0 ? "the CUDA runtime reports no device" : "";
}

}  // namespace anatomy::native
