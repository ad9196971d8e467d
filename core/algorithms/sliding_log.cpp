#include "sliding_log.h"

#include <algorithm>

namespace rl {
namespace {

using Entries = std::deque<SlidingLog::Entry>;

// An entry made at `at` counts while now - at < window. Entries are in time
// order, so the live ones are a suffix: found by binary search.
Entries::const_iterator first_live(const Entries& entries, const Rate& r, int64_t now) {
  return std::partition_point(entries.begin(), entries.end(), [&](const SlidingLog::Entry& e) {
    return now - e.at >= r.window_us;
  });
}

void prune(SlidingLog::State& s, const Rate& r, int64_t now) {
  s.entries.erase(s.entries.begin(), first_live(s.entries, r, now));
}

// Running totals only grow: start them again from 0 long before int64 could
// overflow (every live total is at most the limit, below 2^41). O(n), but
// only once per 2^62 units.
void rebase_if_large(SlidingLog::State& s) {
  constexpr int64_t kRebaseAt = int64_t{1} << 62;
  if (s.entries.empty() || s.entries.back().total < kRebaseAt) return;
  const int64_t before = s.entries.front().total - s.entries.front().cost;
  for (SlidingLog::Entry& e : s.entries) e.total -= before;
}

}  // namespace

Verdict SlidingLog::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  return decide_in(s.entries, r, now, cost);
}

void SlidingLog::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  prune(s, r, now);
  if (!s.entries.empty() && s.entries.back().at >= now) {
    // One entry per instant keeps the log short; a clock that steps back
    // joins the newest entry, so the log stays in time order.
    s.entries.back().cost += cost;
    s.entries.back().total += cost;
  } else {
    const int64_t total = s.entries.empty() ? cost : s.entries.back().total + cost;
    s.entries.push_back({now, cost, total});
  }
  rebase_if_large(s);
}

void SlidingLog::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  prune(s, r, now);
  // Give back the newest units first: they would have been the last to expire.
  while (cost > 0 && !s.entries.empty()) {
    Entry& newest = s.entries.back();
    const int64_t taken = std::min(cost, newest.cost);
    newest.cost -= taken;
    newest.total -= taken;
    cost -= taken;
    if (newest.cost == 0) s.entries.pop_back();
  }
}

int64_t SlidingLog::idle_at(const State& s, const Rate& r) {
  return s.entries.empty() ? 0 : s.entries.back().at + r.window_us;
}

}  // namespace rl
