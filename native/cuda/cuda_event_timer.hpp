// The GPU's timer for the harness's one timing loop (core/bench/harness.hpp):
// CUDA events around each call on the runtime's stream, with the L2 cache
// evicted before every timed call so that no call finds the previous one's data.
#pragma once

#include <cstddef>

#include "bench/harness.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/gpu_runtime.hpp"

namespace anatomy::gpu {

// CUDA events around one call, RAII.
class EventPair {
public:
    EventPair();
    ~EventPair();
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    cudaEvent_t start() const { return start_; }
    cudaEvent_t stop() const { return stop_; }

private:
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Evicts the L2 cache between timed calls by reading a buffer twice its size
// (bench_kernels.hpp: a read leaves no dirty lines to be written back during the
// next timed call). The buffer is never written: its contents do not matter.
class L2Flush {
public:
    explicit L2Flush(const GpuRuntime& g);
    void run(cudaStream_t stream);
    std::size_t bytes() const { return buffer_.bytes(); }

private:
    DeviceBuffer<char> buffer_;
    DeviceBuffer<unsigned> sink_;
};

// start(): waits for the warm-up calls to finish. time_ms(call): flushes L2,
// then the milliseconds between events recorded before and after `call`.
class CudaEventTimer final : public Timer {
public:
    explicit CudaEventTimer(const GpuRuntime& g) : g_(g), l2_flush_(g) {}
    void start() override;
    double time_ms(const std::function<void()>& call) override;
    std::size_t l2_flush_bytes() const { return l2_flush_.bytes(); }

private:
    const GpuRuntime& g_;
    L2Flush l2_flush_;
    EventPair events_;
};

}  // namespace anatomy::gpu
