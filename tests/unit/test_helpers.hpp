// What several doctest files compare with: the same bits, and a check by its id.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tensor.hpp"
#include "verify/checks.hpp"

namespace anatomy::test {

// True in the sanitizer build (tests/unit/CMakeLists.txt). A test case decorated with
// doctest::skip(under_sanitizer) is bulk arithmetic at a whole model's scale, 10 to 20
// times slower under the sanitizers: the native run holds its assertions, and the
// sanitizer run reaches the same code through the smaller case its comment names.
#ifdef ANATOMY_SANITIZED
inline constexpr bool under_sanitizer = true;
#else
inline constexpr bool under_sanitizer = false;
#endif

// The same shape and the same bits (NaNs included, where == would say no).
template <typename Real, std::size_t N>
bool same_bits(const xt::xtensor<Real, N>& a, const xt::xtensor<Real, N>& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The check with this id, or the test fails.
inline const CheckRecord& find_check(const std::vector<CheckRecord>& checks, const std::string& id) {
    for (const CheckRecord& c : checks)
        if (c.id == id) return c;
    FAIL("no check " << id);
    return checks.front();
}

}  // namespace anatomy::test
