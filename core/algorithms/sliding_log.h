// Sliding log: one entry (time, cost) per admitted request. A request is
// admitted when the costs of the entries younger than one window, plus its
// own, fit in the limit. Exact; at most `limit` live entries per key, since
// every entry holds at least one unit.
//
// Each entry also carries the running total of the costs up to it, so a
// decision finds the first live entry and the entry that frees enough units
// by binary search: O(log n) per decision, O(1) amortized per insert.
#pragma once

#include <deque>

#include "config/rate.h"
#include "verdict.h"

namespace rl {

struct SlidingLog {
  struct Entry {
    int64_t at;
    int64_t cost;
    int64_t total;  // the costs of this entry and every older one in the deque
  };
  struct State {
    std::deque<Entry> entries;  // oldest first, `at` ascending
  };
  static constexpr const char* name = "sliding_log";
  static Verdict decide(const State& s, const Rate& r, int64_t now, int64_t cost);
  static void consume(State& s, const Rate& r, int64_t now, int64_t cost);
  static void refund(State& s, const Rate& r, int64_t now, int64_t cost);
  static int64_t idle_at(const State& s, const Rate& r);
};

}  // namespace rl
