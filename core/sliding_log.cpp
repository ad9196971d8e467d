#include "sliding_log.h"

#include <algorithm>

namespace rl {
namespace {

// An entry made at `at` counts while now - at < window.
bool live(const SlidingLog::Entry& e, const Rate& r, int64_t now) {
  return now - e.at < r.window_us;
}

void prune(SlidingLog::State& s, const Rate& r, int64_t now) {
  while (!s.entries.empty() && !live(s.entries.front(), r, now)) s.entries.pop_front();
}

}  // namespace

Verdict SlidingLog::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  int64_t used = 0;
  int64_t newest = -1;
  for (const Entry& e : s.entries) {
    if (!live(e, r, now)) continue;
    used += e.cost;
    newest = e.at;
  }
  if (cost > r.limit) {
    v.retry_after_us = -1;
  } else if (used + cost <= r.limit) {
    v.allowed = true;
    used += cost;
    if (cost > 0) newest = now;
  } else {
    // Wait until enough of the oldest entries have left the window.
    int64_t to_free = used + cost - r.limit;
    for (const Entry& e : s.entries) {
      if (!live(e, r, now)) continue;
      to_free -= e.cost;
      if (to_free <= 0) {
        v.retry_after_us = e.at + r.window_us - now;
        break;
      }
    }
  }
  v.remaining = r.limit - used;
  v.reset_after_us = newest < 0 ? 0 : newest + r.window_us - now;
  return v;
}

void SlidingLog::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  prune(s, r, now);
  if (!s.entries.empty() && s.entries.back().at == now) {
    s.entries.back().cost += cost;  // one entry per instant keeps the log short
  } else {
    s.entries.push_back({now, cost});
  }
}

void SlidingLog::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  prune(s, r, now);
  // Give back the newest units first: they would have been the last to expire.
  while (cost > 0 && !s.entries.empty()) {
    Entry& newest = s.entries.back();
    const int64_t taken = std::min(cost, newest.cost);
    newest.cost -= taken;
    cost -= taken;
    if (newest.cost == 0) s.entries.pop_back();
  }
}

int64_t SlidingLog::idle_at(const State& s, const Rate& r) {
  return s.entries.empty() ? 0 : s.entries.back().at + r.window_us;
}

}  // namespace rl
