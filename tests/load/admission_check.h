// What an algorithm promises, checked from the admission times a run
// collected (not from the store's state). Every call carries the interval
// [t0, t1] it ran in, on the store's clock: the store (or a slice) decided
// at some instant inside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rl_load {

struct Call {
  int64_t t0_us = 0;  // before the call, on the store's clock
  int64_t t1_us = 0;  // after it
  bool allowed = false;
  // No store round trip of its process began or ended while it ran: it
  // was decided from a slice (with the deny cache off, nothing else is).
  bool no_round_trip = false;
};

struct Limit {
  int64_t limit = 0;
  int64_t window_us = 0;
  int64_t granularity_us = 0;  // sliding_window's sub-window (0: the window)
  int64_t burst = 0;           // gcra and token_bucket (0: the limit)
  // sliding_log: how long past its use a unit's record may stand (lease_ms:
  // a slice is recorded at its lease's end, the calls meanwhile join it).
  int64_t record_lag_us = 0;
};

struct Finding {
  int64_t admitted = 0;
  int64_t denied = 0;
  // Most units the promise allows over the run's span (the "limit bound").
  int64_t allowed_by_limit = 0;
  // The largest excess over the promise that the times prove (0: none).
  int64_t over_max = 0;
  // The windows: the most units the promise still had room for at a
  // denial, counting the admissions that may have come before it (capacity
  // that sat in slices). The buckets: allowed_by_limit minus the admitted.
  int64_t under_max = 0;
};

// One algorithm that leases: its name and how its promise is checked.
// `skew_us` widens every call's interval by the clocks' measured skew.
struct Promise {
  std::string algorithm;
  Finding (*check)(std::vector<Call> calls, const Limit& limit, int64_t skew_us);
  // gcra and token_bucket: the store holds slices' units out of the bucket,
  // which refills only up to its capacity minus them meanwhile.
  bool holds = false;
};

// Every algorithm a lease load runs: one entry per algorithm. An algorithm
// whose limiter refuses lease=auto is reported as skipped by the runner.
const std::vector<Promise>& promises();

}  // namespace rl_load
