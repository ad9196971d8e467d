// The outcome of one decision, before it crosses the C ABI.
#pragma once

#include <cstdint>

namespace rl {

// Which path produced a verdict (rl_source in the C ABI; values pinned).
enum class Source : int {
  store = 0,       // the store itself decided
  fail_open = 1,   // the store had an outage and on_failure=open allowed it
  local = 2,       // the store had an outage and the local fallback decided
  deny_cache = 3,  // a denial remembered in this process (deny_cache_keys), no store call
};

inline constexpr int kSourceCount = 4;

// "store", "fail_open", "local", "deny_cache" (rl_source_name, metrics
// labels); nullptr for anything else.
inline const char* source_name(int source) {
  constexpr const char* kNames[kSourceCount] = {"store", "fail_open", "local", "deny_cache"};
  return source >= 0 && source < kSourceCount ? kNames[source] : nullptr;
}

struct Verdict {
  bool allowed = false;
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t retry_after_us = 0;  // -1: never
  int64_t reset_after_us = 0;
  Source source = Source::store;
  int limit_index = 0;  // which limit decided (0-based, in the `limit` setting's order)
  // Redis, one limit, an admitted acquire: when another call of the same
  // cost would be admitted (0: now, or unknown; -1: never). Internal: the
  // denied-key cache learns from it; it does not cross the C ABI.
  int64_t next_retry_after_us = 0;
  // suppressed: the share of calls suppressed under overload (k / 2^24, so
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
