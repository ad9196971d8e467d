#include "token_bucket.h"

#include <algorithm>

#include "wide.h"

namespace rl {
namespace {

int128 capacity(const Rate& r) {
  return wide(r.burst) * r.window_reduced;
}

// The scaled tokens of `cost` units.
int128 tokens_of(const Rate& r, int64_t cost) {
  return wide(cost) * r.window_reduced;
}

// The level at `now`, refilled since it was measured and capped at capacity.
int128 level_at(const TokenBucket::State& s, const Rate& r, int64_t now) {
  const int128 full = capacity(r);
  if (!s.used) return full;
  const int128 missing = full - s.level;
  const int64_t elapsed = std::max<int64_t>(0, now - s.at);
  if (elapsed >= ceil_div(missing, r.limit_reduced)) return full;
  return s.level + wide(elapsed) * r.limit_reduced;
}

}  // namespace

Verdict TokenBucket::decide(const State& s, const Rate& r, int64_t now, int64_t cost) {
  Verdict v;
  v.limit = r.limit;
  int128 level = level_at(s, r, now);
  if (cost > r.burst) {
    v.retry_after_us = -1;
  } else if (tokens_of(r, cost) <= level) {
    v.allowed = true;
    level -= tokens_of(r, cost);
  } else {
    v.retry_after_us = ceil_div(tokens_of(r, cost) - level, r.limit_reduced);
  }
  v.remaining = floor_div(level, r.window_reduced);
  v.reset_after_us = ceil_div(capacity(r) - level, r.limit_reduced);
  return v;
}

void TokenBucket::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  s.level = level_at(s, r, now) - tokens_of(r, cost);
  s.at = std::max(now, s.at);
  s.used = true;
}

void TokenBucket::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  s.level = std::min(capacity(r), level_at(s, r, now) + tokens_of(r, std::min(cost, r.burst)));
  s.at = std::max(now, s.at);
  s.used = true;
}

int64_t TokenBucket::idle_at(const State& s, const Rate& r) {
  if (!s.used) return 0;
  return s.at + ceil_div(capacity(r) - s.level, r.limit_reduced);
}

}  // namespace rl
