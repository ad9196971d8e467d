#include "gcra.h"

#include <algorithm>

namespace rl {
namespace {

// Durations here are scaled: in units of 1/limit_reduced us, so that one unit
// of cost is exactly window_reduced of them.

// How far the TAT lies ahead of now (0 when it is in the past).
int64_t ahead_of(const Gcra::State& s, const Rate& r, int64_t now) {
  return s.tat <= now ? 0 : (s.tat - now) * r.limit_reduced - s.frac;
}

// Stores a TAT `ahead` scaled units after now.
void set_ahead(Gcra::State& s, const Rate& r, int64_t now, int64_t ahead) {
  const int64_t us = ceil_div(ahead, r.limit_reduced);
  s.tat = now + us;
  s.frac = us * r.limit_reduced - ahead;
}

int64_t tolerance(const Rate& r) {
  return r.burst * r.window_reduced;
}

// Whole units that fit in the tolerance left when the TAT is `ahead`.
int64_t units_left(const Rate& r, int64_t ahead) {
  return floor_div(tolerance(r) - ahead, r.window_reduced);
}

}  // namespace

Verdict Gcra::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  const int64_t ahead = ahead_of(s, r, now);
  int64_t after = ahead;  // the TAT once this decision is recorded
  if (cost > r.burst) {
    v.retry_after_us = -1;
  } else if (ahead + cost * r.window_reduced <= tolerance(r)) {
    v.allowed = true;
    after += cost * r.window_reduced;
  } else {
    v.retry_after_us = ceil_div(ahead + cost * r.window_reduced - tolerance(r), r.limit_reduced);
  }
  v.remaining = units_left(r, after);
  v.reset_after_us = ceil_div(after, r.limit_reduced);
  return v;
}

void Gcra::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  set_ahead(s, r, now, ahead_of(s, r, now) + cost * r.window_reduced);
}

void Gcra::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  // Capping at the burst keeps the product below 2^52 for any cost.
  const int64_t units = std::min(cost, r.burst);
  set_ahead(s, r, now, std::max<int64_t>(0, ahead_of(s, r, now) - units * r.window_reduced));
}

int64_t Gcra::idle_at(const State& s, const Rate&) {
  return s.tat;
}

}  // namespace rl
