#include "random.hpp"

#include <cmath>

namespace anatomy {

double deterministic_log(double x) {
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)), so ln x = ln m + e ln 2.
    int e = 0;
    double m = std::frexp(x, &e);  // m in [0.5, 1), exact
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        e -= 1;
    }
    // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m - 1) / (m + 1), |s| <= 0.172.
    // s^2 <= 0.0295, so 13 odd terms take the series below 1e-19 relative.
    const double s = (m - 1.0) / (m + 1.0);
    const double s2 = s * s;
    double series = 1.0 / 25.0;
    for (int k = 23; k >= 1; k -= 2) series = 1.0 / k + s2 * series;
    const double ln2 = 0.693147180559945309417232121458;
    return 2.0 * s * series + e * ln2;
}

std::uint64_t SplitMix64::next_u64() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double SplitMix64::uniform() {
    return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double SplitMix64::normal() {
    for (;;) {
        const double u = 2.0 * uniform() - 1.0;
        const double v = 2.0 * uniform() - 1.0;
        const double s = u * u + v * v;
        if (s > 0.0 && s < 1.0) return u * std::sqrt(-2.0 * deterministic_log(s) / s);
    }
}

}  // namespace anatomy
