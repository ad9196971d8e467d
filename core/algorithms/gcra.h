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
#include "verdict.h"

namespace rl {

struct Gcra {
  struct State {
    int64_t tat = 0;   // 0: never used (any past time means "full")
    int64_t frac = 0;  // exact TAT = tat - frac / limit_reduced; 0 <= frac < limit_reduced
  };
  static constexpr const char* name = "gcra";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  // The time from which the state is the same as an empty one.
  static int64_t idle_at(const State& s, const Rate& r);
};

}  // namespace rl
