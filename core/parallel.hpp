// How the core is handed threads without having any: a function that runs
// body(begin, end) over the index range [0, n), cut into pieces that may run in
// parallel. The native tool passes one that uses std::thread
// (native/parallel_for.hpp); wasm and the tests pass none. An empty ParallelFor
// runs body(0, n) on the calling thread. Callers make each index's result
// independent of the cut, so any number of threads gives the same bits.
#pragma once

#include <cstddef>
#include <functional>

namespace anatomy {

using ParallelFor = std::function<void(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body)>;

}  // namespace anatomy
