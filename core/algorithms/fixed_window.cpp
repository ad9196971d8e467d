#include "fixed_window.h"

#include <algorithm>

namespace rl {
namespace {

int64_t count_at(const FixedWindow::State& s, const Rate& r, int64_t now) {
  return s.window == now / r.window_us ? s.count : 0;
}

// Moves the state to the window of now: a new window forgets its lease mark.
void enter(FixedWindow::State& s, const Rate& r, int64_t now) {
  const int64_t window = now / r.window_us;
  if (s.window != window) {
    s.count = 0;
    s.leased_at = -1;
    s.window = window;
  }
}

}  // namespace

Verdict FixedWindow::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  const int64_t window_end = (now / r.window_us + 1) * r.window_us;
  int64_t count = count_at(s, r, now);
  if (cost > r.limit) {
    v.retry_after_us = -1;
  } else if (count + cost <= r.limit) {
    v.allowed = true;
    count += cost;
  } else {
    v.retry_after_us = window_end - now;
  }
  v.remaining = r.limit - count;
  v.reset_after_us = count > 0 ? window_end - now : 0;
  return v;
}

void FixedWindow::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  enter(s, r, now);
  s.count += cost;
}

void FixedWindow::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  enter(s, r, now);
  s.count = std::max<int64_t>(0, s.count - cost);
}

void FixedWindow::mark_lease(State& s, const Rate&, int64_t now, int64_t, int64_t) {
  if (s.leased_at < 0) s.leased_at = now;
}

bool FixedWindow::give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                            int64_t) {
  const int64_t window = granted_at / r.window_us;
  if (units <= 0 || s.window != window || now / r.window_us != window) return false;
  if (s.leased_at < 0 || s.leased_at > granted_at) return false;  // a reset since the grant
  if (s.count == 0) return false;
  s.count = std::max<int64_t>(0, s.count - units);
  return true;
}

int64_t FixedWindow::idle_at(const State& s, const Rate& r) {
  return s.count > 0 ? (s.window + 1) * r.window_us : 0;
}

}  // namespace rl
