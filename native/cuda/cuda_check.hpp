// Error checking for every CUDA runtime and cuBLAS call: a failing call throws
// CudaError naming the call as written, the error, and the file and line, e.g.
//   cudaMalloc(&pointer, bytes) failed: out of memory (cudaErrorMemoryAllocation) at native/cuda/device_buffer.hpp:31
// Kernel launches are checked with CUDA_CHECK_LAUNCH() right after the <<<...>>>.
// Plain C++: included by .cu files and by the host .cpp files alike.
#pragma once

#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace anatomy::gpu {

struct CudaError : std::runtime_error {
    explicit CudaError(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] inline void throw_cuda_error(const char* call, cudaError_t status, const char* file, int line) {
    throw CudaError(std::string(call) + " failed: " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) +
                    ") at " + file + ":" + std::to_string(line));
}

[[noreturn]] inline void throw_cublas_error(const char* call, cublasStatus_t status, const char* file, int line) {
    throw CudaError(std::string(call) + " failed: " + cublasGetStatusString(status) + " (cuBLAS status " +
                    std::to_string(int(status)) + ") at " + file + ":" + std::to_string(line));
}

}  // namespace anatomy::gpu

#define CUDA_CHECK(call)                                                                               \
    do {                                                                                               \
        const cudaError_t cuda_check_status_ = (call);                                                 \
        if (cuda_check_status_ != cudaSuccess)                                                         \
            ::anatomy::gpu::throw_cuda_error(#call, cuda_check_status_, __FILE__, __LINE__);          \
    } while (0)

#define CUBLAS_CHECK(call)                                                                             \
    do {                                                                                               \
        const cublasStatus_t cublas_check_status_ = (call);                                            \
        if (cublas_check_status_ != CUBLAS_STATUS_SUCCESS)                                             \
            ::anatomy::gpu::throw_cublas_error(#call, cublas_check_status_, __FILE__, __LINE__);      \
    } while (0)

// After a kernel launch: a bad configuration (too many threads, too much shared
// memory) shows up here; a fault inside the kernel shows up at the next synchronising call.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
