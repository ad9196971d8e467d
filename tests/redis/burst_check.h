// A burst of async calls that must decide as the memory store decides the
// same calls one by one (the coalescing tests, on Lua and on the module).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "completions.h"
#include "limiter.h"

namespace rl::test {

inline std::string describe(const Outcome& o) {
  const Verdict& v = o.verdict;
  return "{code " + std::to_string(static_cast<int>(o.code)) + " " + o.message + ", allowed " +
         std::to_string(v.allowed) + ", limit " + std::to_string(v.limit) + ", remaining " +
         std::to_string(v.remaining) + ", retry " + std::to_string(v.retry_after_us) + ", reset " +
         std::to_string(v.reset_after_us) + ", index " + std::to_string(v.limit_index) + "}";
}

// `calls` sent at once on `on_redis` (all but the first wait, so they leave
// as one batch command): each runs once and decides what `on_memory`
// decides for it, the calls run one by one in order.
inline void expect_burst_decides_as_memory(Limiter& on_redis, Limiter& on_memory,
                                           const std::vector<Call>& calls) {
  Completions done(calls.size());
  std::vector<Outcome> got(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    on_redis.run_async(calls[i], [&, i, record = done.for_call(i)](Outcome&& o) mutable {
      got[i] = o;
      record(std::move(o));
    });
  }
  ASSERT_TRUE(done.wait_all(std::chrono::milliseconds(10000)));
  for (size_t i = 0; i < calls.size(); ++i) {
    ASSERT_EQ(done.runs[i], 1);
    const Outcome want = on_memory.run(calls[i].op, calls[i].key, calls[i].cost);
    ASSERT_EQ(describe(got[i]), describe(want)) << "call " << i;
  }
}

}  // namespace rl::test
