#include "gcra.h"

#include <algorithm>

#include "wide.h"

namespace rl {
namespace {

// Durations here are scaled: in units of 1/limit_reduced us, so that one unit
// of cost is exactly window_reduced of them. They reach burst *
// window_reduced (up to 2^85), hence int128.

// How far the TAT lies ahead of now (0 when it is in the past).
int128 ahead_of(const Gcra::State& s, const Rate& r, int64_t now) {
  return s.tat <= now ? 0 : wide(s.tat - now) * r.limit_reduced - s.frac;
}

// Stores a TAT `ahead` scaled units after now.
void set_ahead(Gcra::State& s, const Rate& r, int64_t now, int128 ahead) {
  const int64_t us = ceil_div(ahead, r.limit_reduced);
  s.tat = now + us;
  s.frac = static_cast<int64_t>(wide(us) * r.limit_reduced - ahead);
}

int128 tolerance(const Rate& r) {
  return wide(r.burst) * r.window_reduced;
}

// The scaled duration of `cost` units.
int128 span_of(const Rate& r, int64_t cost) {
  return wide(cost) * r.window_reduced;
}

// Whole units that fit in the tolerance left when the TAT is `ahead`.
int64_t units_left(const Rate& r, int128 ahead) {
  return floor_div(tolerance(r) - ahead, r.window_reduced);
}

}  // namespace

Verdict Gcra::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  const int128 ahead = ahead_of(s, r, now);
  int128 after = ahead;  // the TAT once this decision is recorded
  if (cost > r.burst) {
    v.retry_after_us = -1;
  } else if (ahead + span_of(r, cost) <= tolerance(r)) {
    v.allowed = true;
    after += span_of(r, cost);
  } else {
    v.retry_after_us = ceil_div(ahead + span_of(r, cost) - tolerance(r), r.limit_reduced);
  }
  v.remaining = units_left(r, after);
  v.reset_after_us = ceil_div(after, r.limit_reduced);
  return v;
}

void Gcra::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  set_ahead(s, r, now, ahead_of(s, r, now) + span_of(r, cost));
}

void Gcra::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  const int128 back = ahead_of(s, r, now) - span_of(r, std::min(cost, r.burst));
  set_ahead(s, r, now, back > 0 ? back : 0);
}

int64_t Gcra::idle_at(const State& s, const Rate&) {
  return s.tat;
}

}  // namespace rl
