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

// Records `cost` units at `at` (>= now) and returns the instant they went to.
int64_t record_at(SlidingLog::State& s, const Rate& r, int64_t now, int64_t at, int64_t cost) {
  prune(s, r, now);
  if (!s.entries.empty() && s.entries.back().at >= at) {
    // One entry per instant keeps the log short; a clock that steps back,
    // or a lease's record stamped ahead, is joined, so the log stays in time
    // order (a record at or after its use still covers it).
    s.entries.back().cost += cost;
    s.entries.back().total += cost;
  } else {
    const int64_t total = s.entries.empty() ? cost : s.entries.back().total + cost;
    s.entries.push_back({at, cost, total});
  }
  const int64_t stamped = s.entries.back().at;
  rebase_if_large(s);
  return stamped;
}

}  // namespace

Verdict SlidingLog::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  return decide_in(s.entries, r, now, cost);
}

void SlidingLog::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  record_at(s, r, now, now, cost);
}

int64_t SlidingLog::record_lease(State& s, const Rate& r, int64_t now, int64_t slice,
                                 int64_t hold_us) {
  return record_at(s, r, now, now + hold_us, slice);
}

bool SlidingLog::give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                           int64_t) {
  prune(s, r, now);
  if (units <= 0) return false;
  const size_t n = s.entries.size();
  const size_t reach = std::min<size_t>(n, kReleaseReach);
  size_t i = n;
  while (i > n - reach && s.entries[i - 1].at > granted_at) --i;
  if (i == n - reach || s.entries[i - 1].at != granted_at) return false;
  --i;
  // The slice's unused units leave its record; every later running total
  // loses them too.
  const int64_t taken = std::min(units, s.entries[i].cost);
  for (size_t j = i; j < n; ++j) s.entries[j].total -= taken;
  s.entries[i].cost -= taken;
  if (s.entries[i].cost == 0) s.entries.erase(s.entries.begin() + static_cast<ptrdiff_t>(i));
  return true;
}

void SlidingLog::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  prune(s, r, now);
  // Give back the newest units first: they would have been the last to expire.
  while (cost > 0 && !s.entries.empty() && s.entries.back().at <= now) {
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
