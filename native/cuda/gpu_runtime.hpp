// The GPU a command runs on: device, stream and cuBLAS handle, owned together
// (RAII), plus the facts a report records about the device.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

namespace anatomy::gpu {

struct GpuInfo {
    int index = 0;
    std::string name;
    int major = 0, minor = 0;              // compute capability
    std::size_t total_memory_bytes = 0;
    int multiprocessors = 0;
    std::size_t l2_cache_bytes = 0;
    int driver_version = 0, runtime_version = 0;  // e.g. 12040 = 12.4
};

nlohmann::json gpu_info_to_json(const GpuInfo& info);
// "NVIDIA H200, compute 9.0, 141 GiB, 132 SMs, driver 12.4, runtime 13.0"
std::string gpu_info_line(const GpuInfo& info);

class GpuRuntime {
public:
    // Selects device `index`; throws CudaError when it cannot.
    explicit GpuRuntime(int index);
    ~GpuRuntime();
    GpuRuntime(const GpuRuntime&) = delete;
    GpuRuntime& operator=(const GpuRuntime&) = delete;

    const GpuInfo& info() const { return info_; }
    cudaStream_t stream() const { return stream_; }
    cublasHandle_t cublas() const { return cublas_; }
    void synchronize() const;

private:
    GpuInfo info_;
    cudaStream_t stream_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
};

// How many devices the runtime reports (0 when there is none or no driver).
int cuda_device_count();

}  // namespace anatomy::gpu
