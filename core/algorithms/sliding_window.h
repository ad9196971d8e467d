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
    // The store time of the first lease granted on the state since it was
    // made (-1: none): a lease's return counts only on that state.
    int64_t leased_at = -1;
  };
  static constexpr const char* name = "sliding_window";
  // r.granularity_us divides r.window_us (checked by the policy).
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  static int64_t idle_at(const State& s, const Rate& r);
  // Op::lease, after consume: marks the state as holding leased units.
  static bool may_lease(const State&, int64_t, int64_t) { return true; }
  static void mark_lease(State& s, const Rate& r, int64_t now, int64_t slice, int64_t hold_us);
  // Op::release: `units` of a slice granted at store time `granted_at`
  // were not used. Taken off the counter of the sub-window it was counted
  // in while that counter is kept and the state is the one it was counted
  // in (no reset since); otherwise nothing changes.
  // True when it took units off.
  static bool give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                        int64_t slice);
};

}  // namespace rl
