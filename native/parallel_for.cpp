#include "parallel_for.hpp"

#include <thread>
#include <vector>

namespace anatomy::native {

ParallelFor thread_parallel_for(int threads, std::size_t smallest_piece) {
    if (threads <= 1) return {};
    return [threads, smallest_piece](std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
        const std::size_t pieces = std::min<std::size_t>(std::size_t(threads), std::max<std::size_t>(n / smallest_piece, 1));
        if (pieces <= 1) return body(0, n);
        std::vector<std::thread> helpers;
        for (std::size_t p = 1; p < pieces; ++p) helpers.emplace_back(body, n * p / pieces, n * (p + 1) / pieces);
        body(0, n / pieces);
        for (std::thread& t : helpers) t.join();
    };
}

}  // namespace anatomy::native
