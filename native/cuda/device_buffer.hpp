// A typed buffer in GPU memory that frees itself (RAII), with copies to and from
// host vectors. Move-only: one owner per allocation.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace anatomy::gpu {

template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) : count_(count) {
        if (count_ > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
    }
    // A buffer holding a copy of `host`.
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { copy_from(host); }
    ~DeviceBuffer() {
        if (data_) cudaFree(data_);  // no check: a destructor must not throw
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        if (this != &other) {
            if (data_) cudaFree(data_);
            data_ = std::exchange(other.data_, nullptr);
            count_ = std::exchange(other.count_, 0);
        }
        return *this;
    }

    T* data() { return data_; }
    const T* data() const { return data_; }
    std::size_t size() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }

    // host -> device; `host` must hold at most size() elements.
    void copy_from(const std::vector<T>& host) {
        if (host.size() > count_) throw CudaError("DeviceBuffer::copy_from: host vector larger than the buffer");
        if (!host.empty()) CUDA_CHECK(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    // device -> host, the first `count` elements (all by default).
    std::vector<T> to_host(std::size_t count) const {
        if (count > count_) throw CudaError("DeviceBuffer::to_host: more elements asked than the buffer holds");
        std::vector<T> host(count);
        if (count > 0) CUDA_CHECK(cudaMemcpy(host.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }
    std::vector<T> to_host() const { return to_host(count_); }
    void fill_zero() {
        if (count_ > 0) CUDA_CHECK(cudaMemset(data_, 0, bytes()));
    }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

}  // namespace anatomy::gpu
