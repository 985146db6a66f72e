#include "process_stats.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <sys/resource.h>

#include "number_text.hpp"
#include "tensor.hpp"

namespace anatomy::native {

std::int64_t peak_rss_bytes() {
    struct rusage usage {};
    if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return std::int64_t(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

std::array<double, 3> load_average() {
    std::array<double, 3> load{0, 0, 0};
    if (::getloadavg(load.data(), 3) != 3) load = {0, 0, 0};
    return load;
}

std::string cpu_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) {
            const std::size_t colon = line.find(':');
            if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
        }
    return "unknown CPU";
}

int cpu_threads() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : int(n);
}

std::uint64_t available_memory_bytes() {
    std::uint64_t available = 0;
    std::ifstream meminfo("/proc/meminfo");
    for (std::string line; std::getline(meminfo, line);)
        if (line.rfind("MemAvailable:", 0) == 0) available = std::strtoull(line.c_str() + 13, nullptr, 10) * 1024;  // kB
    // cgroup v2: the limit of this process's group, less what the group holds now.
    std::ifstream limit_file("/sys/fs/cgroup/memory.max"), current_file("/sys/fs/cgroup/memory.current");
    std::string limit_text, current_text;
    if (limit_file >> limit_text && current_file >> current_text && limit_text != "max") {
        const std::uint64_t limit = std::strtoull(limit_text.c_str(), nullptr, 10), current = std::strtoull(current_text.c_str(), nullptr, 10);
        const std::uint64_t left = limit > current ? limit - current : 0;
        if (available == 0 || left < available) available = left;
    }
    return available;
}

void require_memory(double bytes, const std::string& what, const std::string& detail, const std::string& advice) {
    const std::uint64_t free = available_memory_bytes(), held = std::uint64_t(std::max<std::int64_t>(peak_rss_bytes(), 0));
    if (free == 0 || bytes <= double(free)) return;
    const double needed = bytes + double(held);
    throw InputError(what + " needs about " + byte_size_text(needed) +
                     " of memory" + (detail.empty() ? "" : " (" + detail + ")") + "; this machine has " + byte_size_text(double(held + free)) +
                     " for it: " + advice);
}

}  // namespace anatomy::native
