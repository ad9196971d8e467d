// A steady offered load on one suppressed key under the manual clock, so
// memory:// and Redis see the same sequence and the same draws: either each
// tick of every window offers the same number of calls (one batch, decided
// in order), or every call comes at its own microsecond, evenly spaced.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clock.h"
#include "limiter.h"

namespace rl::test {

struct SteadyLoad {
  int64_t limit = 1000;  // per window of 1 s
  int64_t tenths = 20;   // offered load: tenths / 10 * limit per window
  int windows = 60;
  int ticks = 100;  // per window: the offered calls are spread evenly over them
};

struct LoadRun {
  std::vector<int64_t> accepted;  // per window
  std::string decisions;          // one character per call: '1' admitted, '0' not
  std::vector<double> factors;    // the suppression factor of every call
};

inline LoadRun run_steady_load(Limiter& limiter, ManualClock& clock, int64_t start,
                               const SteadyLoad& load) {
  LoadRun run;
  const int64_t tick_us = 1000000 / load.ticks;
  const int64_t per_tick = load.limit * load.tenths / 10 / load.ticks;
  for (int w = 0; w < load.windows; ++w) {
    int64_t accepted = 0;
    for (int t = 0; t < load.ticks; ++t) {
      clock.set(start + w * int64_t{1000000} + t * tick_us);
      std::vector<Call> calls(per_tick, Call{Op::acquire, "hot", 1});
      for (const Outcome& o : limiter.acquire_batch(std::move(calls))) {
        if (o.code != Code::ok) throw Error(o.code, o.message);
        accepted += o.verdict.allowed ? 1 : 0;
        run.decisions += o.verdict.allowed ? '1' : '0';
        run.factors.push_back(o.verdict.suppression_factor);
      }
    }
    run.accepted.push_back(accepted);
  }
  return run;
}

// `rate` calls per second, call k at start + floor(k * 1 s / rate), for
// `seconds` seconds, one by one.
struct EvenLoad {
  int64_t rate = 2000;
  int seconds = 10;
};

struct EvenRun {
  std::vector<int64_t> admitted_at;  // the admitted calls' times, from start
  std::string decisions;             // one character per call: '1' admitted, '0' not
  std::vector<double> factors;       // the suppression factor of every call
};

inline EvenRun run_even_load(Limiter& limiter, ManualClock& clock, int64_t start,
                             const EvenLoad& load) {
  EvenRun run;
  const int64_t calls = load.rate * load.seconds;
  for (int64_t k = 0; k < calls; ++k) {
    const int64_t at = k * 1000000 / load.rate;
    clock.set(start + at);
    const Outcome o = limiter.run(Op::acquire, "hot", 1);
    if (o.code != Code::ok) throw Error(o.code, o.message);
    if (o.verdict.allowed) run.admitted_at.push_back(at);
    run.decisions += o.verdict.allowed ? '1' : '0';
    run.factors.push_back(o.verdict.suppression_factor);
  }
  return run;
}

}  // namespace rl::test
