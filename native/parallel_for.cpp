#include "parallel_for.hpp"

#include <thread>
#include <vector>

namespace anatomy::native {

ParallelFor thread_parallel_for(int threads) {
    if (threads <= 1) return {};
    return [threads](std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
        // Fewer than 64 rows a piece is not worth a thread's start-up (tens of microseconds).
        const std::size_t pieces = std::min<std::size_t>(std::size_t(threads), std::max<std::size_t>(n / 64, 1));
        if (pieces <= 1) return body(0, n);
        std::vector<std::thread> helpers;
        for (std::size_t p = 1; p < pieces; ++p) helpers.emplace_back(body, n * p / pieces, n * (p + 1) / pieces);
        body(0, n / pieces);
        for (std::thread& t : helpers) t.join();
    };
}

}  // namespace anatomy::native
