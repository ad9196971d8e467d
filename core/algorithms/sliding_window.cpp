#include "sliding_window.h"

#include <algorithm>
#include <vector>

#include "wide.h"

namespace rl {
namespace {

// The counters seen from sub-window `current` at `offset` microseconds into
// it: `full` counted in full, `partial` weighted by (g - offset) / g.
struct View {
  int64_t full = 0;
  int64_t partial = 0;
};

View view_at(const SlidingWindow::State& s, int64_t buckets_per_window, int64_t current) {
  View v;
  const int64_t oldest_full = current - buckets_per_window + 1;
  for (const auto& b : s.buckets) {
    if (b.index >= oldest_full && b.index <= current) v.full += b.count;
    if (b.index == oldest_full - 1) v.partial = b.count;
  }
  return v;
}

// The straddling counter's share at `offset`, partial * (g - offset) / g,
// rounded up: compared with whole counts, that is the exact comparison.
int64_t weighted(const View& v, int64_t g, int64_t offset) {
  return ceil_div(wide(v.partial) * (g - offset), g);
}

// Does a request of `cost` fit at `offset` into a sub-window seen as `v`?
bool fits(const View& v, const Rate& r, int64_t g, int64_t offset, int64_t cost) {
  return v.full + cost + weighted(v, g, offset) <= r.limit;
}

// The earliest offset in a sub-window seen as `v` at which `cost` fits, or g
// when it does not fit anywhere in it.
int64_t first_fitting_offset(const View& v, const Rate& r, int64_t g, int64_t cost) {
  const int64_t room = r.limit - v.full - cost;
  if (room < 0) return g;
  if (room >= v.partial) return 0;
  return g - floor_div(wide(room) * g, v.partial);
}

void prune(SlidingWindow::State& s, int64_t buckets_per_window, int64_t current) {
  while (!s.buckets.empty() && s.buckets.front().index < current - buckets_per_window) {
    s.buckets.pop_front();
  }
}

}  // namespace

Verdict SlidingWindow::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  const int64_t g = r.granularity_us;
  Verdict v;
  v.limit = r.limit;
  const int64_t n = r.window_us / g;
  const int64_t current = now / g;
  const int64_t offset = now % g;
  const View here = view_at(s, n, current);
  int64_t newest = s.buckets.empty() ? -1 : s.buckets.back().index;
  if (newest >= 0 && newest < current - n) newest = -1;
  int64_t used_full = here.full;
  if (cost > r.limit) {
    v.retry_after_us = -1;
  } else if (fits(here, r, g, offset, cost)) {
    v.allowed = true;
    used_full += cost;
    if (cost > 0) newest = current;
  } else {
    // The straddling counter's weight falls as time passes in this
    // sub-window; after it, usage only changes when a counter starts or stops
    // straddling the window's start: try those sub-windows in order.
    const int64_t later_here = first_fitting_offset(here, r, g, cost);
    std::vector<int64_t> candidates;
    for (const auto& b : s.buckets) {
      candidates.push_back(b.index + n);
      candidates.push_back(b.index + n + 1);
    }
    std::sort(candidates.begin(), candidates.end());
    v.retry_after_us = later_here < g ? later_here - offset : -1;
    for (int64_t sub : candidates) {
      if (v.retry_after_us >= 0) break;
      if (sub <= current) continue;
      const int64_t at = first_fitting_offset(view_at(s, n, sub), r, g, cost);
      if (at < g) {
        v.retry_after_us = sub * g + at - now;
      }
    }
    if (v.retry_after_us < 0) {  // unreachable while cost <= limit; stay safe
      v.retry_after_us = (current + n + 1) * g - now;
    }
  }
  v.remaining = std::max<int64_t>(0, r.limit - used_full - weighted(here, g, offset));
  v.reset_after_us = newest < 0 ? 0 : (newest + n + 1) * g - now;
  return v;
}

void SlidingWindow::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  const int64_t g = r.granularity_us;
  const int64_t current = now / g;
  prune(s, r.window_us / g, current);
  if (!s.buckets.empty() && s.buckets.back().index == current) {
    s.buckets.back().count += cost;
  } else {
    s.buckets.push_back({current, cost});
  }
}

void SlidingWindow::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  const int64_t g = r.granularity_us;
  prune(s, r.window_us / g, now / g);
  while (cost > 0 && !s.buckets.empty()) {
    Bucket& newest = s.buckets.back();
    const int64_t taken = std::min(cost, newest.count);
    newest.count -= taken;
    cost -= taken;
    if (newest.count == 0) s.buckets.pop_back();
  }
}

void SlidingWindow::mark_lease(State& s, const Rate&, int64_t now, int64_t, int64_t) {
  if (s.leased_at < 0) s.leased_at = now;
}

bool SlidingWindow::give_back(State& s, const Rate& r, int64_t now, int64_t units,
                              int64_t granted_at, int64_t) {
  if (units <= 0 || s.leased_at < 0 || s.leased_at > granted_at) return false;
  const int64_t g = r.granularity_us;
  prune(s, r.window_us / g, now / g);
  const int64_t index = granted_at / g;
  for (auto it = s.buckets.begin(); it != s.buckets.end(); ++it) {
    if (it->index != index) continue;
    it->count -= std::min(units, it->count);
    if (it->count == 0) s.buckets.erase(it);
    return true;
  }
  return false;
}

int64_t SlidingWindow::idle_at(const State& s, const Rate& r) {
  const int64_t g = r.granularity_us;
  if (s.buckets.empty()) return 0;
  return (s.buckets.back().index + r.window_us / g + 1) * g;
}

}  // namespace rl
