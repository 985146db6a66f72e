// The native tool's ParallelFor (core/pretrained/weight_view.hpp): std::thread.
#pragma once

#include "pretrained/weight_view.hpp"

namespace anatomy::native {

// Cuts [0, n) into `threads` contiguous pieces, runs the first on the calling
// thread and each other on a thread of its own, and waits for all of them.
// One thread (or n too small to share) gives an empty ParallelFor: no threads at all.
ParallelFor thread_parallel_for(int threads);

}  // namespace anatomy::native
