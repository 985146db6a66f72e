// An attention "kernel" on the host for the tests of the checks the core makes of kernels
// it cannot call (test_kernel_cases.cpp, test_device_attention_backend.cpp): masked
// attention from each query row's visible-key ranges, with the sinks when given, in fp32,
// one row at a time, written apart from the core's functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "verify/kernel_cases.hpp"

namespace anatomy::test {

// out [B, Hq, T, D] and probs [B, Hq, T, S] for `in` (KernelInputs' layout).
struct HostRun {
    std::vector<float> out, probs;
};

inline HostRun host_attention(const KernelShape& s, const KernelInputs& in) {
    HostRun run;
    run.out.assign(std::size_t(s.B * s.Hq * s.T * s.D), 0.0f);
    run.probs.assign(std::size_t(s.B * s.Hq * s.T * s.S), 0.0f);
    const float scale = 1.0f / std::sqrt(float(s.D));
    for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t h = 0; h < s.Hq; ++h)
            for (std::int64_t t = 0; t < s.T; ++t) {
                const std::int64_t row = (b * s.Hq + h) * s.T + t;
                const std::int64_t g = h / (s.Hq / s.Hkv);
                std::vector<float> score(std::size_t(s.S), 0.0f);
                std::vector<bool> seen(std::size_t(s.S), false);
                float m = !in.sinks.empty() ? in.sinks[std::size_t(h)] : -std::numeric_limits<float>::infinity();
                for (std::int64_t key = 0; key < s.S; ++key) {
                    const std::int32_t* r = &in.ranges[std::size_t(t) * 4];
                    if (!((key >= r[0] && key < r[1]) || (key >= r[2] && key < r[3]))) continue;
                    float dot = 0;
                    for (std::int64_t d = 0; d < s.D; ++d)
                        dot += in.q[std::size_t(row * s.D + d)] * in.k[std::size_t(((b * s.Hkv + g) * s.S + key) * s.D + d)];
                    score[std::size_t(key)] = dot * scale;
                    seen[std::size_t(key)] = true;
                    m = std::max(m, dot * scale);
                }
                if (m == -std::numeric_limits<float>::infinity()) continue;
                float sum = !in.sinks.empty() ? std::exp(in.sinks[std::size_t(h)] - m) : 0.0f;
                for (std::int64_t key = 0; key < s.S; ++key)
                    if (seen[std::size_t(key)]) sum += std::exp(score[std::size_t(key)] - m);
                for (std::int64_t key = 0; key < s.S; ++key) {
                    if (!seen[std::size_t(key)]) continue;
                    const float p = std::exp(score[std::size_t(key)] - m) / sum;
                    run.probs[std::size_t(row * s.S + key)] = p;
                    for (std::int64_t d = 0; d < s.D; ++d)
                        run.out[std::size_t(row * s.D + d)] += p * in.v[std::size_t(((b * s.Hkv + g) * s.S + key) * s.D + d)];
                }
            }
    return run;
}

}  // namespace anatomy::test
