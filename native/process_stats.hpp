// What the machine and this process look like while a command runs: peak memory,
// load average, the CPU's name. Linux (getrusage, getloadavg, /proc/cpuinfo).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace anatomy::native {

// Peak resident set size of this process so far, in bytes (getrusage ru_maxrss).
// Pages of a memory-mapped file count once they have been read.
std::int64_t peak_rss_bytes();
// The 1, 5 and 15 minute load averages (zeros when unavailable).
std::array<double, 3> load_average();
// "model name" from /proc/cpuinfo, or "unknown CPU".
std::string cpu_name();
// Hardware threads this process may run on.
int cpu_threads();
// Memory this process could still take, in bytes: the kernel's MemAvailable, or less
// when a control group limits the process (memory.max less memory.current). 0 when
// neither can be read.
std::uint64_t available_memory_bytes();
// Throws InputError when `bytes` more than this process holds will not fit in what the
// machine has free: "WHAT needs about 30.6 GB of memory (DETAIL); this machine has
// 24.7 GB for it: ADVICE". Nothing when the free memory cannot be read.
void require_memory(double bytes, const std::string& what, const std::string& detail, const std::string& advice);

}  // namespace anatomy::native
