#include "suppressed.h"

#include <algorithm>

#include "wide.h"

namespace rl {
namespace {

constexpr int64_t kSecondUs = 1000000;

int64_t buckets_per_window(const Rate& r) {
  return r.window_us / r.granularity_us;
}

// Drops the sub-windows that left the window; a factor computed while they
// counted is stale then, so it is dropped too.
void prune(Suppressed::State& s, const Rate& r, int64_t now) {
  const int64_t oldest = now / r.granularity_us - buckets_per_window(r) + 1;
  bool dropped = false;
  while (!s.buckets.empty() && s.buckets.front().index < oldest) {
    s.buckets.pop_front();
    dropped = true;
  }
  if (dropped) s.factor_until = 0;
}

// What the live sub-windows hold at `now`.
struct Totals {
  int64_t total = 0;             // T: every call
  int64_t accepted = 0;          // A: the admitted ones
  int64_t recent = 0;            // T of the sub-windows that started in the last second
  int64_t current_total = 0;     // t: the current sub-window's T
  int64_t current_accepted = 0;  // a: its A
};

// Where the oldest sub-window that started in the last second starts (it
// may be before 0, or not live): index * g >= now - 1 s, the least such.
int64_t recent_start(const Rate& r, int64_t now) {
  const int64_t g = r.granularity_us;
  if (now >= kSecondUs) return (now - kSecondUs + g - 1) / g * g;
  return -((kSecondUs - now) / g) * g;
}

Totals totals(const Suppressed::State& s, const Rate& r, int64_t now) {
  Totals t;
  const int64_t current = now / r.granularity_us;
  const int64_t recent_from = recent_start(r, now);
  for (const auto& b : s.buckets) {
    t.total += b.total;
    t.accepted += b.accepted;
    if (b.index * r.granularity_us >= recent_from) t.recent += b.total;
    if (b.index == current) {
      t.current_total = b.total;
      t.current_accepted = b.accepted;
    }
  }
  return t;
}

// kScale * soft / P rounded down, at most kScale: P = total * window / span,
// the cost offered per window at the rate `total` per `span` us. No call:
// kScale.
int64_t base_of(int64_t total, int64_t span, const Rate& r) {
  if (total == 0) return Suppressed::kScale;
  // The span as a share of the window, in 1 / kScale (span <= window).
  const int64_t share = floor_div(wide(Suppressed::kScale) * span, r.window_us);
  return std::min(Suppressed::kScale, floor_div(wide(share) * r.limit, total));
}

// The base admit probability, soft / P: P the larger of the rate over the
// live sub-windows, from the oldest one's start to now, and (windows above
// a second) over the sub-windows that started in the last second, from the
// start of the oldest of those; each span at least one sub-window.
int64_t base_threshold(const Totals& t, const Rate& r, int64_t now) {
  const int64_t g = r.granularity_us;
  const int64_t live_span = (buckets_per_window(r) - 1) * g + now % g;
  const int64_t by_window = base_of(t.total, std::max(g, live_span), r);
  if (r.window_us <= kSecondUs) return by_window;
  const int64_t recent_span = now - recent_start(r, now);
  return std::min(by_window, base_of(t.recent, std::max(g, recent_span), r));
}

// The threshold for this call: its sub-window's admitted cost follows
// base * (its T) within one call's cost. deficit = base * (t + cost) - a *
// kScale; the call is admitted with probability deficit / cost, in [0, 1].
int64_t paced_threshold(const Totals& t, int64_t base, int64_t cost) {
  const int128 deficit =
      wide(base) * (t.current_total + cost) - wide(t.current_accepted) * Suppressed::kScale;
  if (deficit <= 0) return 0;
  // A cost of 0 (a peek) has its deficit already: always, as the Lua code's
  // `whole >= cost` says (and no division by 0).
  if (cost == 0) return Suppressed::kScale;
  return static_cast<int64_t>(std::min<int128>(Suppressed::kScale, deficit / cost));
}

// One limit's view of a call before anything is recorded.
struct Judgement {
  bool admits = false;  // this limit alone admits the call
  int64_t base = 0;     // the reported admit probability (kScale: factor 0)
  bool cache = false;   // base was computed: keep it for factor_reuse
};

Judgement judge(const Suppressed::State& s, const Rate& r, const Totals& t, int64_t now,
                int64_t cost, int64_t draw) {
  Judgement j;
  if (t.accepted + cost > r.burst) return j;  // the hard limit: denied, factor 1
  if (t.total + cost <= r.limit) {
    // Every call offered in the window fits the soft limit: admitted outright.
    j.admits = true;
    j.base = Suppressed::kScale;
    return j;
  }
  j.cache = !(now < s.factor_until);
  j.base = j.cache ? base_threshold(t, r, now) : s.base;
  j.admits = draw < paced_threshold(t, j.base, cost);
  return j;
}

// The earliest time, with no other calls, at which `cost` is admitted for
// sure: when total + cost <= limit again, or, for a cost above the soft
// limit, when the window is empty. -1 above the hard limit.
int64_t retry_after(const Suppressed::State& s, const Rate& r, const Totals& t, int64_t now,
                    int64_t cost) {
  if (cost > r.burst) return -1;
  const int64_t n = buckets_per_window(r);
  const int64_t g = r.granularity_us;
  if (cost > r.limit) return s.buckets.empty() ? 0 : (s.buckets.back().index + n) * g - now;
  int64_t total = t.total;
  for (const auto& b : s.buckets) {
    if (total + cost <= r.limit) break;
    total -= b.total;
    if (total + cost <= r.limit) return (b.index + n) * g - now;
  }
  return 0;
}

void record(Suppressed::State& s, const Rate& r, int64_t now, int64_t cost, bool admitted) {
  const int64_t current = now / r.granularity_us;
  if (s.buckets.empty() || s.buckets.back().index != current) s.buckets.push_back({current, 0, 0});
  Suppressed::Bucket& b = s.buckets.back();
  b.total = std::min(b.total + cost, kMaxLimit);
  if (admitted) b.accepted += cost;
}

// A refunded call is taken back as if never offered: from the newest
// sub-windows' accepted cost and their total alike.
void refund(Suppressed::State& s, int64_t cost) {
  for (auto it = s.buckets.rbegin(); cost > 0 && it != s.buckets.rend(); ++it) {
    const int64_t taken = std::min(cost, it->accepted);
    it->accepted -= taken;
    it->total -= taken;
    cost -= taken;
  }
}

}  // namespace

int64_t Suppressed::idle_at(const State& s, const Rate& r) {
  if (s.buckets.empty()) return 0;
  return (s.buckets.back().index + buckets_per_window(r)) * r.granularity_us;
}

Verdict Suppressed::apply(Op op, std::span<State> states, const std::vector<Rate>& rates,
                          int64_t now, int64_t cost, const Chance& chance, bool& changed) {
  const size_t n = rates.size();
  changed = op != Op::peek;
  if (op == Op::reset) {
    for (size_t i = 0; i < n; ++i) states[i] = State{};
  }
  if (op == Op::refund || op == Op::reset) {
    Fold after;
    for (size_t i = 0; i < n; ++i) {
      prune(states[i], rates[i], now);
      if (op == Op::refund) refund(states[i], cost);
      const Totals t = totals(states[i], rates[i], now);
      Verdict v;
      v.allowed = true;
      v.limit = rates[i].limit;
      v.remaining = std::max<int64_t>(0, rates[i].limit - t.accepted);
      const int64_t idle = idle_at(states[i], rates[i]);
      v.reset_after_us = idle > now ? idle - now : 0;
      after.add(v);
    }
    return after.result();
  }
  // A peek works on copies: it prunes and caches nothing.
  std::vector<State> copies;
  std::span<State> work = states;
  if (op == Op::peek) {
    copies.assign(states.begin(), states.end());
    work = copies;
  }
  std::vector<Totals> t(n);
  std::vector<Judgement> j(n);
  bool admitted = true;
  // A cost above a hard limit could never be admitted: it is no load to
  // thin, so nothing records it.
  bool records = op == Op::acquire;
  for (size_t i = 0; i < n; ++i) {
    records = records && cost <= rates[i].burst;
    prune(work[i], rates[i], now);
    t[i] = totals(work[i], rates[i], now);
    j[i] = judge(work[i], rates[i], t[i], now, cost, chance.draw);
    admitted = admitted && j[i].admits;
  }
  Fold fold;
  int64_t base = kScale;
  for (size_t i = 0; i < n; ++i) {
    State& s = work[i];
    const Rate& r = rates[i];
    Verdict v;
    v.allowed = admitted;
    v.limit = r.limit;
    v.retry_after_us = admitted || j[i].admits ? 0 : retry_after(s, r, t[i], now, cost);
    if (records) {
      if (j[i].cache) {
        s.factor_until = now + chance.factor_reuse_us;
        s.base = j[i].base;
      }
      record(s, r, now, cost, admitted);
    }
    const int64_t accepted = t[i].accepted + (admitted ? cost : 0);
    v.remaining = std::max<int64_t>(0, r.limit - accepted);
    const int64_t idle = idle_at(s, r);
    v.reset_after_us = idle > now ? idle - now : 0;
    fold.add(v);
    base = std::min(base, j[i].base);
  }
  Verdict out = fold.result();
  out.allowed = admitted;
  out.suppression_factor = static_cast<double>(kScale - base) / static_cast<double>(kScale);
  return out;
}

}  // namespace rl
