#include "lease_hold.h"

#include <algorithm>

namespace rl {
namespace {

// One generation's term of the floor: `units` until `expiry`, then less by
// the refill since.
struct Term {
  int64_t units;
  int64_t expiry;
};

int128 floor_of(const Term& t, const Rate& r, int64_t now) {
  if (t.units <= 0) return 0;
  const int128 held = wide(t.units) * r.window_reduced;
  if (now <= t.expiry) return held;
  const int128 refilled = wide(now - t.expiry) * r.limit_reduced;
  return refilled >= held ? 0 : held - refilled;
}

// Until its expiry both generations hold; from then to the next, the newer.
template <class F>
void each_term(const LeaseHold& h, F f) {
  f(Term{h.held_new + h.held_old, (h.gen + 1) * h.period_us});
  f(Term{h.held_new, (h.gen + 2) * h.period_us});
}

}  // namespace

int128 LeaseHold::floor_at(const Rate& r, int64_t now) const {
  int128 out = 0;
  each_term(*this, [&](const Term& t) { out = std::max(out, floor_of(t, r, now)); });
  return out;
}

int64_t LeaseHold::wait_for_floor(const Rate& r, int64_t now, int128 target) const {
  int64_t out = 0;
  each_term(*this, [&](const Term& t) {
    const int128 held = wide(t.units) * r.window_reduced;
    if (t.units <= 0 || held <= target) return;
    out = std::max(out, t.expiry - now + ceil_div(held - target, r.limit_reduced));
  });
  return out;
}

int64_t LeaseHold::idle_at(const Rate& r) const {
  int64_t out = 0;
  each_term(*this, [&](const Term& t) {
    if (t.units <= 0) return;
    out = std::max(out, t.expiry + ceil_div(wide(t.units) * r.window_reduced, r.limit_reduced));
  });
  return out;
}

bool LeaseHold::live(int64_t now) const {
  if (period_us <= 0) return false;
  return (held_new > 0 && now < (gen + 2) * period_us) ||
         (held_old > 0 && now < (gen + 1) * period_us);
}

bool LeaseHold::accepts(int64_t now, int64_t hold_us) const {
  return hold_us > 0 && (!live(now) || hold_us <= period_us);
}

void LeaseHold::hold(int64_t now, int64_t units, int64_t hold_us) {
  if (!live(now)) {
    // Every earlier hold expired (the grant's consume already counted what
    // their floor still took): a new run of generations, and a new mark.
    leased_at = now;
    period_us = hold_us;
    gen = now / hold_us;
    held_new = units;
    held_old = 0;
    return;
  }
  const int64_t g = now / period_us;
  if (g > gen) {  // g == gen + 1 while a hold is live: the older one expired
    held_old = held_new;
    held_new = 0;
    gen = g;
  }
  held_new += units;  // (a clock that stepped back: the newest generation)
}

bool LeaseHold::release(int64_t now, int64_t granted_at, int64_t slice) {
  if (period_us <= 0 || granted_at < leased_at || slice <= 0) return false;
  const int64_t g = granted_at / period_us;
  if (g == gen && held_new > 0 && now < (gen + 2) * period_us) {
    held_new -= std::min(slice, held_new);
    return true;
  }
  if (g == gen - 1 && held_old > 0 && now < (gen + 1) * period_us) {
    held_old -= std::min(slice, held_old);
    return true;
  }
  return false;
}

}  // namespace rl
