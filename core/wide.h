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

// ceil(a / b) and floor(a / b) for a >= 0, b > 0, when the result fits int64.
inline int64_t ceil_div(int128 a, int64_t b) {
  return static_cast<int64_t>((a + b - 1) / b);
}
inline int64_t floor_div(int128 a, int64_t b) {
  return static_cast<int64_t>(a / b);
}

}  // namespace rl
