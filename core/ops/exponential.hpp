// e^x for softmax, the core's one exponential (the reference, the vectorised steps the
// model runs and the fast kernels v1 to v3 all call it), written out so that it
//   - gives the same bits with g++, Emscripten's clang and nvcc's host compiler (a
//     C library's expf may differ in the last bit between libraries: glibc natively,
//     musl in wasm), so native and wasm probabilities agree exactly;
//   - inlines into softmax's loop and vectorises, where a call to expf per element
//     would not.
// Float: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two parts, Cody and Waite,
// so n ln2 is exact), e^r by its Taylor series to r^7 (truncation below 1e-8
// relative), times 2^n made from the exponent bits. Within 2 ulp of e^x
// (tests/unit/test_ops.cpp sweeps it against a double-precision exp). Inputs below
// -87.3 give 0 (e^x would be subnormal), above 88.7 infinity, NaN stays NaN.
// It covers every input (NaN and infinities pass through, which the checks for
// non-finite values rely on), so the fast kernels give the reference's bits.
// Double keeps std::exp: the fp64 reference paths are held to the C library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace anatomy {

// The float whose bits these are (one scalar copy: GCC vectorises it, not a copy of an array).
inline float float_from_bits(std::uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
}

inline float exponential(float x) {
    constexpr float log2e = 1.44269504088896341f;
    constexpr float ln2_hi = 0.693145751953125f;     // ln 2's leading 16 bits: n * ln2_hi is exact for |n| < 2^8
    constexpr float ln2_lo = 1.42860682030941723e-6f;  // ln 2 - ln2_hi
    constexpr float round_magic = 12582912.0f;         // 1.5 * 2^23: adding it rounds to an integer in the low bits
    const float clamped = x < -87.3f ? -87.3f : (x > 88.7f ? 88.7f : x);  // NaN passes through
    // n = round(x / ln 2): the magic add leaves n in the low mantissa bits of `biased`.
    const float biased = clamped * log2e + round_magic;
    const float n = biased - round_magic;
    const float r = (clamped - n * ln2_hi) - n * ln2_lo;
    // e^r = 1 + r + r^2/2! + ... + r^7/7!, by Horner's rule.
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    // 2^n from its bits. The magic add left 2^23 + 2^22 + n in `biased`, so its
    // mantissa field is 2^22 + n. n is in [-126, 128] and 2^128 is not a float, so
    // 2^n is applied as 2^h * 2^(n - h) with h = floor(n / 2), each a normal float.
    std::uint32_t bits;
    std::memcpy(&bits, &biased, 4);
    const std::int32_t n_int = std::int32_t(bits & 0x7FFFFFu) - 0x400000;
    const std::int32_t half = n_int >> 1;  // floor(n / 2): an arithmetic shift in GCC and clang
    const float result = p * float_from_bits(std::uint32_t(half + 127) << 23) * float_from_bits(std::uint32_t(n_int - half + 127) << 23);
    return x < -87.3f ? 0.0f : x > 88.7f ? HUGE_VALF : result;
}

inline double exponential(double x) { return std::exp(x); }

}  // namespace anatomy
