// GCRA (generic cell rate algorithm): the theoretical arrival time (TAT) of
// a key. Each unit of cost moves TAT by window/limit; a request is admitted
// while TAT stays within burst * window/limit of now.
// Exactness: window/limit is a fraction (3/s: 333333.33 us), so the TAT is
// kept to 1/limit_reduced of a microsecond: `tat` rounded up to the
// microsecond plus `frac`, how far the exact TAT lies before it. frac is 0
// whenever limit divides window; decisions equal the exact continuous bucket
// (the same as token_bucket), never rounded per request.
#pragma once

#include "config/rate.h"
#include "lease_hold.h"
#include "verdict.h"

namespace rl {

struct Gcra {
  struct State {
    int64_t tat = 0;   // 0: never used (any past time means "full")
    int64_t frac = 0;  // exact TAT = tat - frac / limit_reduced; 0 <= frac < limit_reduced
    // Units leases' slices hold (a floor under the TAT: lease_hold.h).
    HeldUnits hold;
  };
  static constexpr const char* name = "gcra";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  // The time from which the state is the same as an empty one.
  static int64_t idle_at(const State& s, const Rate& r);
  // Leases (docs/algorithms.md, Leases): whether a slice held `hold_us`
  // may be granted; after a grant's consume, its hold; a release of a
  // slice's `units` unused of `slice`, true when the state still held it.
  static bool may_lease(const State& s, int64_t now, int64_t hold_us);
  static void mark_lease(State& s, const Rate& r, int64_t now, int64_t slice, int64_t hold_us);
  static bool give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                        int64_t slice);
};

}  // namespace rl
