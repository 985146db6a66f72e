// The deterministic generator behind every random weight and test input.
//
// Why our own: std::normal_distribution is specified only in distribution, so
// libstdc++ (g++, nvcc's host compiler) and libc++ (Emscripten) give different
// numbers for the same seed. We need bit-identical weights in every build.
//
// The recipe, which any reimplementation can follow:
//   1. SplitMix64 (Steele, Lea, Flood 2014) produces 64-bit words.
//   2. uniform(): the top 53 bits of a word, times 2^-53, a double in [0, 1).
//   3. normal(): Marsaglia's polar method. Draw u = 2a - 1, v = 2b - 1 from two
//      uniforms; retry unless 0 < s = u^2 + v^2 < 1; return u * sqrt(-2 ln(s) / s).
//      The partner value v * sqrt(...) is discarded, so each normal costs a
//      whole number of retries and nothing carries between calls.
//   4. ln is our own (deterministic_log below): only +, -, *, / and frexp, which
//      IEEE 754 makes exact or correctly rounded everywhere, whereas libm's log
//      may differ in the last bit between C libraries.
// The core is compiled with -ffp-contract=off so no compiler fuses a * b + c.
#pragma once

#include <cstdint>

namespace anatomy {

// ln(x) for finite x > 0, accurate to about 1 ulp, identical on every IEEE platform.
double deterministic_log(double x);

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next_u64();
    double uniform();  // [0, 1)
    double normal();   // mean 0, standard deviation 1

private:
    std::uint64_t state_;
};

}  // namespace anatomy
