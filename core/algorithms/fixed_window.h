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
  };
  static constexpr const char* name = "fixed_window";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  static int64_t idle_at(const State& s, const Rate& r);
};

}  // namespace rl
