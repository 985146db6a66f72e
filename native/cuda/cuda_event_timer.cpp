#include "cuda/cuda_event_timer.hpp"

#include <algorithm>

#include "cuda/bench_kernels.hpp"
#include "cuda/cuda_check.hpp"

namespace anatomy::gpu {

EventPair::EventPair() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
}

EventPair::~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
}

L2Flush::L2Flush(const GpuRuntime& g)
    : buffer_((std::max<std::size_t>(2 * g.info().l2_cache_bytes, 1 << 20) + 15) / 16 * 16), sink_(1) {}

void L2Flush::run(cudaStream_t stream) { read_through(buffer_.data(), buffer_.bytes(), sink_.data(), stream); }

void CudaEventTimer::start() { g_.synchronize(); }

double CudaEventTimer::time_ms(const std::function<void()>& call) {
    l2_flush_.run(g_.stream());
    CUDA_CHECK(cudaEventRecord(events_.start(), g_.stream()));
    call();
    CUDA_CHECK(cudaEventRecord(events_.stop(), g_.stream()));
    CUDA_CHECK(cudaEventSynchronize(events_.stop()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events_.start(), events_.stop()));
    return ms;
}

}  // namespace anatomy::gpu
