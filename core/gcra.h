// GCRA (generic cell rate algorithm): one integer per key, the theoretical
// arrival time (TAT). Each unit of cost moves TAT by window/limit; a request
// is admitted while TAT stays within burst * window/limit of now.
// Rounding: the emission time of `n` units is ceil(n * window / limit) us,
// so a fractional rate (3/s) never admits more than its limit.
#pragma once

#include "rate.h"
#include "verdict.h"

namespace rl {

struct Gcra {
  struct State {
    int64_t tat = 0;  // 0: never used (any past time means "full")
  };
  static constexpr const char* name = "gcra";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  // The time from which the state is the same as an empty one.
  static int64_t idle_at(const State& s, const Rate& r);
};

}  // namespace rl
