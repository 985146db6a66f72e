#include "cuda/gpu_runtime.hpp"

#include <cstdio>

#include "cuda/cuda_check.hpp"

namespace anatomy::gpu {

namespace {
std::string version_text(int version) {  // 12040 -> "12.4"
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}
}  // namespace

nlohmann::json gpu_info_to_json(const GpuInfo& i) {
    return {{"kind", "cuda"},
            {"index", i.index},
            {"name", i.name},
            {"compute_capability", std::to_string(i.major) + "." + std::to_string(i.minor)},
            {"total_memory_bytes", i.total_memory_bytes},
            {"multiprocessors", i.multiprocessors},
            {"l2_cache_bytes", i.l2_cache_bytes},
            {"driver_version", version_text(i.driver_version)},
            {"runtime_version", version_text(i.runtime_version)}};
}

std::string gpu_info_line(const GpuInfo& i) {
    char line[256];
    std::snprintf(line, sizeof line, "%s, compute %d.%d, %.0f GiB, %d SMs, driver %s, runtime %s", i.name.c_str(),
                  i.major, i.minor, double(i.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0), i.multiprocessors,
                  version_text(i.driver_version).c_str(), version_text(i.runtime_version).c_str());
    return line;
}

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the error so later calls start clean
        return 0;
    }
    return count;
}

GpuRuntime::GpuRuntime(int index) {
    CUDA_CHECK(cudaSetDevice(index));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
    info_.index = index;
    info_.name = prop.name;
    info_.major = prop.major;
    info_.minor = prop.minor;
    info_.total_memory_bytes = prop.totalGlobalMem;
    info_.multiprocessors = prop.multiProcessorCount;
    info_.l2_cache_bytes = std::size_t(prop.l2CacheSize);
    CUDA_CHECK(cudaDriverGetVersion(&info_.driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&info_.runtime_version));
    CUDA_CHECK(cudaStreamCreate(&stream_));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
}

GpuRuntime::~GpuRuntime() {
    if (cublas_) cublasDestroy(cublas_);
    if (stream_) cudaStreamDestroy(stream_);
}

void GpuRuntime::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace anatomy::gpu
