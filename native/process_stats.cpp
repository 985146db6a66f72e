#include "process_stats.hpp"

#include <cstdlib>
#include <fstream>
#include <thread>

#include <sys/resource.h>

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

}  // namespace anatomy::native
