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
int128 raw_level_at(const TokenBucket::State& s, const Rate& r, int64_t now) {
  const int128 full = capacity(r);
  if (!s.used) return full;
  const int128 missing = full - s.level;
  const int64_t elapsed = std::max<int64_t>(0, now - s.at);
  if (elapsed >= ceil_div(missing, r.limit_reduced)) return full;
  return s.level + wide(elapsed) * r.limit_reduced;
}

// The same, capped too at capacity minus what slices hold.
int128 level_at(const TokenBucket::State& s, const Rate& r, int64_t now) {
  const int128 raw = raw_level_at(s, r, now);
  if (!s.hold) return raw;
  return std::min(raw, capacity(r) - s.hold->floor_at(r, now));
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
  } else if (!s.hold) {
    v.retry_after_us = ceil_div(tokens_of(r, cost) - level, r.limit_reduced);
  } else {
    // The stored level refills at the rate, the cap the holds lower only
    // once their generation expires: both must reach the cost.
    const int128 raw = raw_level_at(s, r, now);
    const int128 need = tokens_of(r, cost);
    v.retry_after_us = std::max(raw < need ? ceil_div(need - raw, r.limit_reduced) : 0,
                                s.hold->wait_for_floor(r, now, capacity(r) - need));
  }
  v.remaining = floor_div(level, r.window_reduced);
  v.reset_after_us = ceil_div(capacity(r) - level, r.limit_reduced);
  if (s.hold) v.reset_after_us = std::max(v.reset_after_us, s.hold->wait_for_floor(r, now, 0));
  return v;
}

void TokenBucket::consume(State& s, const Rate& r, int64_t now, int64_t cost) {
  s.level = level_at(s, r, now) - tokens_of(r, cost);
  s.at = std::max(now, s.at);
  s.used = true;
  s.hold.settle(r, now);
}

void TokenBucket::refund(State& s, const Rate& r, int64_t now, int64_t cost) {
  s.level = std::min(capacity(r), level_at(s, r, now) + tokens_of(r, std::min(cost, r.burst)));
  s.at = std::max(now, s.at);
  s.used = true;
  s.hold.settle(r, now);
}

int64_t TokenBucket::idle_at(const State& s, const Rate& r) {
  if (!s.used) return 0;
  const int64_t full_at = s.at + ceil_div(capacity(r) - s.level, r.limit_reduced);
  return s.hold ? std::max(full_at, s.hold->idle_at(r)) : full_at;
}

bool TokenBucket::may_lease(const State& s, int64_t now, int64_t hold_us) {
  return s.hold.accepts(now, hold_us);
}

void TokenBucket::mark_lease(State& s, const Rate&, int64_t now, int64_t slice, int64_t hold_us) {
  s.hold.hold(now, slice, hold_us);
}

bool TokenBucket::give_back(State& s, const Rate& r, int64_t now, int64_t units, int64_t granted_at,
                            int64_t slice) {
  if (!s.hold) return false;
  // The level under the cap as it stands, before the hold comes off: the
  // unused units go back to the bucket as it is.
  const int128 level = level_at(s, r, now);
  if (!s.hold->release(now, granted_at, slice)) return false;
  s.level = std::min(capacity(r), level + tokens_of(r, std::clamp<int64_t>(units, 0, r.burst)));
  s.at = std::max(now, s.at);
  s.used = true;
  s.hold.settle(r, now);
  return true;
}

}  // namespace rl
