// Fixed window: one counter for the current window; windows are aligned to
// multiples of the window length since the clock's epoch.
#pragma once

#include "config/rate.h"
#include "verdict.h"

namespace rl {

struct FixedWindow {
  struct State {
    int64_t window = -1;  // index of the window the count belongs to
    int64_t count = 0;
    // The store time of the first lease granted in this window since the
    // state was made (-1: none): a lease's return counts only while the
    // state is that one (docs/algorithms.md, Leases).
    int64_t leased_at = -1;
  };
  static constexpr const char* name = "fixed_window";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  static int64_t idle_at(const State& s, const Rate& r);
  // Op::lease, after consume: marks the state as holding leased units.
  static bool may_lease(const State&, int64_t, int64_t) { return true; }
  static void mark_lease(State& s, const Rate& r, int64_t now, int64_t slice, int64_t hold_us);
  // Op::release: `units` of a slice granted at store time `granted_at`
  // were not used. Taken off the count only while the window is the one
  // the slice was counted in and the state is the one it was counted in
  // (no reset since); otherwise nothing changes.
  // True when it took units off.
  static bool give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                        int64_t slice);
};

}  // namespace rl
