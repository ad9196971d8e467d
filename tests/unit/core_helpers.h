// Helpers for tests of the algorithm structs (core/, no store in between).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/decide.h"
#include "config/rate.h"
#include "verdict.h"

namespace rl_test {

// One rate from its text ("3/s"), with an optional burst and granularity.
inline rl::Rate rate_of(const std::string& text, int64_t burst = 0, int64_t granularity_us = 0) {
  rl::Rate r = rl::parse_rates(text).at(0);
  r.burst = burst;
  rl::finish_rate(r);
  r.granularity_us = granularity_us ? granularity_us : r.window_us;
  return r;
}

// One key's state under one rate, driven through rl::apply as a store would.
template <class Algo>
struct OneKey {
  explicit OneKey(rl::Rate rate) : rates{rate}, states(1) {}
  rl::Verdict run(rl::Op op, int64_t now, int64_t cost = 1) {
    bool changed = false;
    return rl::apply<Algo>(op, states, rates, now, cost, changed);
  }
  rl::Verdict acquire(int64_t now, int64_t cost = 1) { return run(rl::Op::acquire, now, cost); }
  std::vector<rl::Rate> rates;
  std::vector<typename Algo::State> states;
};

inline ::testing::AssertionResult verdict_is(const rl::Verdict& v, bool allowed, int64_t limit,
                                             int64_t remaining, int64_t retry_after_us,
                                             int64_t reset_after_us) {
  if (v.allowed == allowed && v.limit == limit && v.remaining == remaining &&
      v.retry_after_us == retry_after_us && v.reset_after_us == reset_after_us) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got {allowed " << v.allowed << ", limit " << v.limit << ", remaining " << v.remaining
         << ", retry_after " << v.retry_after_us << ", reset_after " << v.reset_after_us
         << "}, expected {" << allowed << ", " << limit << ", " << remaining << ", "
         << retry_after_us << ", " << reset_after_us << "}";
}

}  // namespace rl_test
