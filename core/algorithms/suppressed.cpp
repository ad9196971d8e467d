#include "suppressed.h"

#include <algorithm>

#include "wide.h"

namespace rl {
namespace {

constexpr int64_t kSecondUs = 1000000;

// What the live sub-windows hold at `now`.
struct Totals {
  int64_t total = 0;     // T: every call
  int64_t accepted = 0;  // T - D: the admitted ones
  int64_t recent = 0;    // T of the sub-windows that started in the last second
};

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

Totals totals(const Suppressed::State& s, const Rate& r, int64_t now) {
  Totals t;
  for (const auto& b : s.buckets) {
    t.total += b.total;
    t.accepted += b.accepted;
    if (b.index * r.granularity_us >= now - kSecondUs) t.recent += b.total;
  }
  return t;
}

// The admit threshold, kScale * (1 - suppression factor), rounded down:
// kScale * (limit / window) / P where P, the observed rate, is the larger
// of T / window and the rate of the last second. Computed only in the band,
// where accepted + cost > limit.
int64_t admit_threshold(const Totals& t, const Rate& r) {
  if (t.total >= r.burst) return 0;
  if (t.accepted < r.limit) return Suppressed::kScale;
  // accepted >= limit >= 1, so total >= 1.
  const int64_t by_window = floor_div(wide(r.limit) * Suppressed::kScale, t.total);
  const int64_t seconds = r.window_us / kSecondUs;
  // recent * seconds > total, compared without the product (Lua's doubles).
  if (t.recent > t.total / seconds) {
    const int64_t by_recent =
        floor_div(wide(r.limit) * Suppressed::kScale, t.recent) / seconds;  // floor(floor(x/a)/b)
    return std::min(by_window, by_recent);
  }
  return by_window;
}

// One limit's view of a call before anything is recorded.
struct Judgement {
  bool admits = false;  // this limit alone admits the call
  int64_t admit = 0;    // the threshold applied (kScale: admitted outright)
  bool cache = false;   // the factor is to be kept (computed or at the hard limit)
};

Judgement judge(const Suppressed::State& s, const Rate& r, const Totals& t, int64_t now,
                int64_t cost, int64_t draw) {
  Judgement j;
  const int64_t forecast = t.accepted + cost;
  if (forecast <= r.limit) {
    j.admits = true;
    j.admit = Suppressed::kScale;
  } else if (forecast == r.burst) {
    // Reaching the hard limit exactly is admitted; the calls after it are
    // fully suppressed while the factor is reused.
    j.admits = true;
    j.admit = Suppressed::kScale;
    j.cache = true;
  } else if (forecast > r.burst) {
    j.admit = 0;
    j.cache = true;
  } else {
    j.admit = now < s.factor_until ? s.admit : admit_threshold(t, r);
    j.cache = !(now < s.factor_until);
    j.admits = draw < j.admit;
  }
  return j;
}

// The earliest time, with no other calls, at which `cost` is admitted for
// sure: when accepted + cost <= limit again, or, for a cost above the soft
// limit, when the window is empty. -1 above the hard limit.
int64_t retry_after(const Suppressed::State& s, const Rate& r, const Totals& t, int64_t now,
                    int64_t cost) {
  if (cost > r.burst) return -1;
  const int64_t n = buckets_per_window(r);
  const int64_t g = r.granularity_us;
  if (cost > r.limit) return s.buckets.empty() ? 0 : (s.buckets.back().index + n) * g - now;
  int64_t accepted = t.accepted;
  for (const auto& b : s.buckets) {
    if (accepted + cost <= r.limit) break;
    accepted -= b.accepted;
    if (accepted + cost <= r.limit) return (b.index + n) * g - now;
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

void refund(Suppressed::State& s, int64_t cost) {
  for (auto it = s.buckets.rbegin(); cost > 0 && it != s.buckets.rend(); ++it) {
    const int64_t taken = std::min(cost, it->accepted);
    it->accepted -= taken;
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
  for (size_t i = 0; i < n; ++i) {
    prune(work[i], rates[i], now);
    t[i] = totals(work[i], rates[i], now);
    j[i] = judge(work[i], rates[i], t[i], now, cost, chance.draw);
    admitted = admitted && j[i].admits;
  }
  Fold fold;
  int64_t admit = kScale;
  for (size_t i = 0; i < n; ++i) {
    State& s = work[i];
    const Rate& r = rates[i];
    Verdict v;
    v.allowed = admitted;
    v.limit = r.limit;
    v.retry_after_us = admitted || j[i].admits ? 0 : retry_after(s, r, t[i], now, cost);
    if (op == Op::acquire) {
      if (j[i].cache) {
        s.factor_until = now + chance.factor_reuse_us;
        s.admit = j[i].admit;
      }
      record(s, r, now, cost, admitted);
    }
    const int64_t accepted = t[i].accepted + (admitted ? cost : 0);
    v.remaining = std::max<int64_t>(0, r.limit - accepted);
    const int64_t idle = idle_at(s, r);
    v.reset_after_us = idle > now ? idle - now : 0;
    fold.add(v);
    admit = std::min(admit, j[i].admit);
  }
  Verdict out = fold.result();
  out.allowed = admitted;
  out.suppression_factor = static_cast<double>(kScale - admit) / static_cast<double>(kScale);
  return out;
}

}  // namespace rl
