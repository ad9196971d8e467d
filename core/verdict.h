// The outcome of one decision, before it crosses the C ABI.
#pragma once

#include <cstdint>

namespace rl {

struct Verdict {
  bool allowed = false;
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t retry_after_us = 0;  // -1: never
  int64_t reset_after_us = 0;
  int limit_index = 0;  // which limit decided (0-based, in the `limit` setting's order)
};

// Integer helpers shared by the algorithms (all operands non-negative).
inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
inline int64_t floor_div(int64_t a, int64_t b) {
  return a / b;
}

}  // namespace rl
