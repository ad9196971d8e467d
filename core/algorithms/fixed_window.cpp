#include "fixed_window.h"

#include <algorithm>

namespace rl {
namespace {

int64_t count_at(const FixedWindow::State& s, const Rate& r, int64_t now) {
  return s.window == now / r.window_us ? s.count : 0;
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
  s.count = count_at(s, r, now) + cost;
  s.window = now / r.window_us;
}

void FixedWindow::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  s.count = std::max<int64_t>(0, count_at(s, r, now) - cost);
  s.window = now / r.window_us;
}

int64_t FixedWindow::idle_at(const State& s, const Rate& r) {
  return s.count > 0 ? (s.window + 1) * r.window_us : 0;
}

}  // namespace rl
