#include "gcra.h"

#include <algorithm>

namespace rl {
namespace {

// Emission time of n units, rounded up to the microsecond.
int64_t emission(const Rate& r, int64_t n) {
  return ceil_div(n * r.window_reduced, r.limit_reduced);
}

// Units that fit in `slack` microseconds of tolerance.
int64_t units_in(const Rate& r, int64_t slack) {
  return slack <= 0 ? 0 : floor_div(slack * r.limit_reduced, r.window_reduced);
}

}  // namespace

Verdict Gcra::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  const int64_t tolerance = emission(r, r.burst);
  const int64_t tat = std::max(s.tat, now);
  if (cost > r.burst) {
    v.retry_after_us = -1;
    v.remaining = units_in(r, tolerance - (tat - now));
    v.reset_after_us = tat - now;
    return v;
  }
  const int64_t new_tat = tat + emission(r, cost);
  if (new_tat - now <= tolerance) {
    v.allowed = true;
    v.remaining = units_in(r, tolerance - (new_tat - now));
    v.reset_after_us = new_tat - now;
  } else {
    v.retry_after_us = new_tat - tolerance - now;
    v.remaining = units_in(r, tolerance - (tat - now));
    v.reset_after_us = tat - now;
  }
  return v;
}

void Gcra::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  s.tat = std::max(s.tat, now) + emission(r, cost);
}

void Gcra::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  // Capping at the burst keeps the product below 2^52 for any cost.
  s.tat = std::max(s.tat - emission(r, std::min(cost, r.burst)), now);
}

int64_t Gcra::idle_at(const State& s, const Rate&) { return s.tat; }

}  // namespace rl
