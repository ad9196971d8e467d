#include "token_bucket.h"

#include <algorithm>

namespace rl {
namespace {

int64_t capacity(const Rate& r) {
  return r.burst * r.window_reduced;
}

// The level at `now`, refilled since it was measured and capped at capacity.
int64_t level_at(const TokenBucket::State& s, const Rate& r, int64_t now) {
  const int64_t full = capacity(r);
  if (!s.used) return full;
  const int64_t missing = full - s.level;
  const int64_t elapsed = std::max<int64_t>(0, now - s.at);
  if (elapsed >= ceil_div(missing, r.limit_reduced)) return full;
  return s.level + elapsed * r.limit_reduced;
}

}  // namespace

Verdict TokenBucket::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  int64_t level = level_at(s, r, now);
  if (cost > r.burst) {
    v.retry_after_us = -1;
  } else if (cost * r.window_reduced <= level) {
    v.allowed = true;
    level -= cost * r.window_reduced;
  } else {
    v.retry_after_us = ceil_div(cost * r.window_reduced - level, r.limit_reduced);
  }
  v.remaining = floor_div(level, r.window_reduced);
  v.reset_after_us = ceil_div(capacity(r) - level, r.limit_reduced);
  return v;
}

void TokenBucket::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  s.level = level_at(s, r, now) - cost * r.window_reduced;
  s.at = std::max(now, s.at);
  s.used = true;
}

void TokenBucket::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  // Capping at the burst keeps the product below 2^52 for any cost.
  const int64_t units = std::min(cost, r.burst);
  s.level = std::min(capacity(r), level_at(s, r, now) + units * r.window_reduced);
  s.at = std::max(now, s.at);
  s.used = true;
}

int64_t TokenBucket::idle_at(const State& s, const Rate& r) {
  if (!s.used) return 0;
  return s.at + ceil_div(capacity(r) - s.level, r.limit_reduced);
}

}  // namespace rl
