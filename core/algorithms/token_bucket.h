// Token bucket: a level and the time it was measured. Capacity is the burst;
// it refills continuously at limit/window. The level is kept in units of
// 1/window_reduced of a token, so every refill step is an exact integer; it
// reaches burst * window_reduced (up to 2^85), hence int128.
#pragma once

#include "config/rate.h"
#include "lease_hold.h"
#include "verdict.h"
#include "wide.h"

namespace rl {

struct TokenBucket {
  struct State {
    int128 level = 0;  // scaled tokens: tokens * window_reduced
    int64_t at = 0;    // when level was measured
    bool used = false;
    // Units leases' slices hold: the bucket refills only up to capacity
    // minus them (lease_hold.h).
    HeldUnits hold;
  };
  static constexpr const char* name = "token_bucket";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  static int64_t idle_at(const State& s, const Rate& r);
  // Leases, as Gcra's.
  static bool may_lease(const State& s, int64_t now, int64_t hold_us);
  static void mark_lease(State& s, const Rate& r, int64_t now, int64_t slice, int64_t hold_us);
  static bool give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                        int64_t slice);
};

}  // namespace rl
