// Sliding window: counters per sub-window of `granularity` (the window must
// be a multiple of it). The usage at `now` counts the sub-windows that lie
// inside (now - window, now] in full, and the one that straddles its start in
// proportion to its overlap. With granularity = window this is the classic
// two-counter estimate. Constant memory per key; it may admit up to one
// granularity's worth of requests early (docs/algorithms.md).
#pragma once

#include <deque>

#include "config/rate.h"
#include "verdict.h"

namespace rl {

struct SlidingWindow {
  struct Bucket {
    int64_t index;  // now / granularity when it was counted
    int64_t count;
  };
  struct State {
    std::deque<Bucket> buckets;  // non-zero counters, oldest first
  };
  static constexpr const char* name = "sliding_window";
  // r.granularity_us divides r.window_us (checked by the policy).
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  static int64_t idle_at(const State& s, const Rate& r);
};

}  // namespace rl
