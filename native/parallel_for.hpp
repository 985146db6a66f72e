// The native tool's ParallelFor (core/parallel.hpp): std::thread.
#pragma once

#include "parallel.hpp"

namespace anatomy::native {

// Cuts [0, n) into `threads` contiguous pieces of at least `smallest_piece` indices
// (fewer pieces when n is small), runs the first on the calling thread and each
// other on a thread of its own, and waits for all of them. One thread gives an
// empty ParallelFor: no threads at all. The default suits rows of a projection:
// fewer than 64 a piece is not worth a thread's start-up (tens of microseconds).
ParallelFor thread_parallel_for(int threads, std::size_t smallest_piece = 64);

}  // namespace anatomy::native
