// The outcome of one decision, before it crosses the C ABI.
#pragma once

#include <cstdint>

namespace rl {

// Which path produced a verdict (rl_source in the C ABI; values pinned).
enum class Source : int {
  store = 0,      // the store itself decided
  fail_open = 1,  // the store had an outage and on_failure=open allowed it
  local = 2,      // the store had an outage and the local fallback decided
};

struct Verdict {
  bool allowed = false;
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t retry_after_us = 0;  // -1: never
  int64_t reset_after_us = 0;
  Source source = Source::store;
  int limit_index = 0;  // which limit decided (0-based, in the `limit` setting's order)
  // suppressed: the share of calls suppressed in the band (k / 2^24, so
  // exact in Lua too); 0 for every other algorithm.
  double suppression_factor = 0;
};

// Integer helpers shared by the algorithms (all operands non-negative).
inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
inline int64_t floor_div(int64_t a, int64_t b) {
  return a / b;
}

}  // namespace rl
