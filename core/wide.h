// Exact integer arithmetic beyond 64 bits for the algorithms. A scaled value
// such as a token bucket's capacity, burst * window_reduced, reaches 2^85
// for limits inside the documented ranges (docs/algorithms.md, "Limits"), so
// the algorithms compute it in __int128; every result they keep or report
// (a time, a count) fits int64 again. The Lua scripts reach the same values
// with lua/common.lua's muldiv.
#pragma once

#include <cstdint>

namespace rl {

using int128 = __int128;

inline int128 wide(int64_t a) {
  return a;
}

// Whether a (>= 0) fits 64 bits. Most scaled values do (a burst of 100 per
// minute scales to 6e7): one machine division then instead of libgcc's
// 128-bit one (about 78 instructions per call), with the same result. A
// divisor of 1 (limit_reduced when the limit divides the window in
// microseconds, the usual case) needs no division at all.
inline bool fits_u64(int128 a) {
  return static_cast<unsigned __int128>(a) >> 64 == 0;
}

// ceil(a / b) and floor(a / b) for a >= 0, b > 0, when the result fits int64.
inline int64_t ceil_div(int128 a, int64_t b) {
  if (fits_u64(a)) {
    const auto n = static_cast<uint64_t>(a);
    if (b == 1) return static_cast<int64_t>(n);
    const auto d = static_cast<uint64_t>(b);
    return static_cast<int64_t>(n / d + (n % d != 0));
  }
  return static_cast<int64_t>((a + b - 1) / b);
}
inline int64_t floor_div(int128 a, int64_t b) {
  if (fits_u64(a)) {
    const auto n = static_cast<uint64_t>(a);
    if (b == 1) return static_cast<int64_t>(n);
    return static_cast<int64_t>(n / static_cast<uint64_t>(b));
  }
  return static_cast<int64_t>(a / b);
}

}  // namespace rl
