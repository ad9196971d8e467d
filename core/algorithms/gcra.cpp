#include "gcra.h"

#include <algorithm>

#include "wide.h"

namespace rl {
namespace {

// Durations here are scaled: in units of 1/limit_reduced us, so that one unit
// of cost is exactly window_reduced of them. They reach burst *
// window_reduced (up to 2^85), hence int128.

// How far the stored TAT lies ahead of now (0 when it is in the past).
int128 raw_ahead_of(const Gcra::State& s, const Rate& r, int64_t now) {
  return s.tat <= now ? 0 : wide(s.tat - now) * r.limit_reduced - s.frac;
}

// The same, no nearer than the floor slices' holds put under it.
int128 ahead_of(const Gcra::State& s, const Rate& r, int64_t now) {
  const int128 raw = raw_ahead_of(s, r, now);
  if (!s.hold) return raw;
  return std::max(raw, s.hold->floor_at(r, now));
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
  } else if (!s.hold) {
    v.retry_after_us = ceil_div(ahead + span_of(r, cost) - tolerance(r), r.limit_reduced);
  } else {
    // The stored TAT comes nearer at the clock's rate, the holds' floor
    // only once their generation expires: both must leave room.
    const int128 room = tolerance(r) - span_of(r, cost);
    const int128 raw = raw_ahead_of(s, r, now);
    v.retry_after_us = std::max(raw > room ? ceil_div(raw - room, r.limit_reduced) : 0,
                                s.hold->wait_for_floor(r, now, room));
  }
  v.remaining = units_left(r, after);
  v.reset_after_us = ceil_div(after, r.limit_reduced);
  if (s.hold) v.reset_after_us = std::max(v.reset_after_us, s.hold->wait_for_floor(r, now, 0));
  return v;
}

void Gcra::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  set_ahead(s, r, now, ahead_of(s, r, now) + span_of(r, cost));
  s.hold.settle(r, now);
}

void Gcra::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  const int128 back = ahead_of(s, r, now) - span_of(r, std::min(cost, r.burst));
  set_ahead(s, r, now, back > 0 ? back : 0);
  s.hold.settle(r, now);
}

int64_t Gcra::idle_at(const State& s, const Rate& r) {
  return s.hold ? std::max(s.tat, s.hold->idle_at(r)) : s.tat;
}

bool Gcra::may_lease(const State& s, int64_t now, int64_t hold_us) {
  return s.hold.accepts(now, hold_us);
}

void Gcra::mark_lease(State& s, const Rate&, int64_t now, int64_t slice, int64_t hold_us) {
  s.hold.hold(now, slice, hold_us);
}

bool Gcra::give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                     int64_t slice) {
  if (!s.hold) return false;
  // The TAT with the floor as it stands, before the hold comes off: the
  // unused units go back to the bucket as it is, not as the floor hid it.
  const int128 ahead = ahead_of(s, r, now);
  if (!s.hold->release(now, granted_at, slice)) return false;
  const int128 back = ahead - span_of(r, std::clamp<int64_t>(units, 0, r.burst));
  set_ahead(s, r, now, back > 0 ? back : 0);
  s.hold.settle(r, now);
  return true;
}

}  // namespace rl
