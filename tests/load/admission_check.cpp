#include "admission_check.h"

#include <algorithm>
#include <map>

namespace rl_load {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

// The sub-window (or window) an instant falls in.
int64_t slot(int64_t t_us, int64_t width) {
  return floor_div(t_us, width);
}

void count_calls(const std::vector<Call>& calls, Finding& f) {
  for (const Call& c : calls) (c.allowed ? f.admitted : f.denied)++;
}

// How many units the promise allows over the calls' span when at most
// `limit` fit in `n` consecutive slots of `width` (fixed_window: n = 1).
int64_t allowed_over_span(const std::vector<Call>& calls, int64_t limit, int64_t width, int64_t n) {
  if (calls.empty()) return 0;
  int64_t first = calls.front().t0_us, last = calls.front().t1_us;
  for (const Call& c : calls) {
    first = std::min(first, c.t0_us);
    last = std::max(last, c.t1_us);
  }
  return limit * ceil_div(slot(last, width) - slot(first, width) + 1, n);
}

// Per slot, the admissions whose interval, widened by the skew, lies in it
// (`forced`: their ends, sorted), and the admissions by the slot of their
// end, the latest they can be in (`by_end`: their starts, sorted). The
// forced counts are a lower bound on each slot's, for over-admission; the
// others, read before a denial, an upper bound on what had been used.
struct Slots {
  std::map<int64_t, std::vector<int64_t>> forced_ends;  // slot -> sorted t1 + skew
  std::map<int64_t, std::vector<int64_t>> end_starts;   // slot -> sorted t0
  int64_t forced(int64_t s) const {
    auto it = forced_ends.find(s);
    return it == forced_ends.end() ? 0 : static_cast<int64_t>(it->second.size());
  }
  int64_t by_end(int64_t s) const {
    auto it = end_starts.find(s);
    return it == end_starts.end() ? 0 : static_cast<int64_t>(it->second.size());
  }
  int64_t by_end_before(int64_t s, int64_t t_us) const {
    auto it = end_starts.find(s);
    if (it == end_starts.end()) return 0;
    return std::lower_bound(it->second.begin(), it->second.end(), t_us) - it->second.begin();
  }
};

Slots slots_of(const std::vector<Call>& calls, int64_t width, int64_t skew_us) {
  Slots s;
  for (const Call& c : calls) {
    if (!c.allowed) continue;
    const int64_t lo = c.t0_us - skew_us, hi = c.t1_us + skew_us;
    if (slot(lo, width) == slot(hi, width)) s.forced_ends[slot(lo, width)].push_back(hi);
    s.end_starts[slot(c.t1_us, width)].push_back(c.t0_us);
  }
  for (auto& [_, v] : s.forced_ends) std::sort(v.begin(), v.end());
  for (auto& [_, v] : s.end_starts) std::sort(v.begin(), v.end());
  return s;
}

// fixed_window: no window [k*W, (k+1)*W) holds more than the limit.
Finding fixed_window(std::vector<Call> calls, const Limit& l, int64_t skew_us) {
  Finding f;
  count_calls(calls, f);
  f.allowed_by_limit = allowed_over_span(calls, l.limit, l.window_us, 1);
  const Slots s = slots_of(calls, l.window_us, skew_us);
  for (const auto& [w, ends] : s.forced_ends) {
    f.over_max = std::max(f.over_max, static_cast<int64_t>(ends.size()) - l.limit);
  }
  for (const Call& c : calls) {
    if (c.allowed || slot(c.t0_us, l.window_us) != slot(c.t1_us, l.window_us)) continue;
    const int64_t w = slot(c.t0_us, l.window_us);
    f.under_max = std::max(f.under_max, l.limit - s.by_end_before(w, c.t1_us));
  }
  return f;
}

// sliding_window: at every instant, the counters of the n sub-windows up to
// now plus the straddling one's weight, ceil(partial * (g - offset) / g),
// hold at most the limit (docs/algorithms.md, sliding_window). The sum only
// rises at an admission and its weight only falls within a sub-window, so
// it is checked at each admission's end and at each sub-window's start;
// and its corollary, at most the limit in any window - g.
Finding sliding_window(std::vector<Call> calls, const Limit& l, int64_t skew_us) {
  Finding f;
  count_calls(calls, f);
  const int64_t g = l.granularity_us > 0 ? l.granularity_us : l.window_us;
  const int64_t n = l.window_us / g;
  f.allowed_by_limit = allowed_over_span(calls, l.limit, g, n);
  const Slots s = slots_of(calls, g, skew_us);
  auto weight = [&](int64_t partial, int64_t offset) {
    return ceil_div(partial * (g - std::clamp<int64_t>(offset, 0, g - 1)), g);
  };
  auto full_before = [&](int64_t c, auto count) {
    int64_t full = 0;
    for (int64_t i = c - n + 1; i < c; ++i) full += count(i);
    return full;
  };
  for (const auto& [c, ends] : s.forced_ends) {
    const int64_t base = full_before(c, [&](int64_t i) { return s.forced(i); });
    const int64_t partial = s.forced(c - n);
    f.over_max = std::max(f.over_max, base + partial - l.limit);
    for (size_t k = 0; k < ends.size(); ++k) {
      const int64_t used = base + static_cast<int64_t>(k) + 1 + weight(partial, ends[k] - c * g);
      f.over_max = std::max(f.over_max, used - l.limit);
    }
  }
  // Its corollary, of any window of window - g (docs/algorithms.md): for
  // each admission's start a, the admissions that began at a or later and
  // ended (at the latest: a start plus the longest call) before a + window - g.
  if (n > 1) {
    std::vector<int64_t> starts;
    int64_t widest = 0;
    for (const Call& c : calls) {
      if (!c.allowed) continue;
      starts.push_back(c.t0_us - skew_us);
      widest = std::max(widest, c.t1_us - c.t0_us + 2 * skew_us);
    }
    std::sort(starts.begin(), starts.end());
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t last_start = starts[i] + l.window_us - g - widest;  // exclusive
      const auto end = std::lower_bound(starts.begin() + static_cast<std::ptrdiff_t>(i),
                                        starts.end(), last_start);
      f.over_max = std::max(f.over_max, (end - starts.begin()) - static_cast<int64_t>(i) - l.limit);
    }
  }
  for (const Call& c : calls) {
    if (c.allowed || slot(c.t0_us, g) != slot(c.t1_us, g)) continue;
    const int64_t sub = slot(c.t1_us, g);
    // The weight at the denial's start: the most it can have weighed then.
    const int64_t used = full_before(sub, [&](int64_t i) { return s.by_end(i); }) +
                         s.by_end_before(sub, c.t1_us) +
                         weight(s.by_end(sub - n), c.t0_us - sub * g);
    f.under_max = std::max(f.under_max, l.limit - used);
  }
  return f;
}

// The most of `score` over a set of points that a suffix of them can be
// raised by at once: a max segment tree with range add (points start absent).
class MaxTree {
 public:
  explicit MaxTree(size_t n) : n_(n), mx_(4 * n + 4, kAbsent), add_(4 * n + 4, 0) {}
  // Every point at `from` or later gains `by`.
  void add_from(size_t from, __int128 by) { add(1, 0, n_ - 1, from, by); }
  // Point `at` is present, worth `base` plus what add_from gave it so far.
  void set(size_t at, __int128 base) { set(1, 0, n_ - 1, at, base); }
  __int128 max() const { return mx_[1]; }

 private:
  static constexpr __int128 kAbsent = -(static_cast<__int128>(1) << 120);
  void add(size_t node, size_t lo, size_t hi, size_t from, __int128 by) {
    if (hi < from) return;
    if (lo >= from) {
      mx_[node] += by;
      add_[node] += by;
      return;
    }
    const size_t mid = (lo + hi) / 2;
    add(2 * node, lo, mid, from, by);
    add(2 * node + 1, mid + 1, hi, from, by);
    mx_[node] = add_[node] + std::max(mx_[2 * node], mx_[2 * node + 1]);
  }
  void set(size_t node, size_t lo, size_t hi, size_t at, __int128 base) {
    if (lo == hi) {
      mx_[node] = add_[node] + base;
      return;
    }
    const size_t mid = (lo + hi) / 2;
    at <= mid ? set(2 * node, lo, mid, at, base) : set(2 * node + 1, mid + 1, hi, at, base);
    mx_[node] = add_[node] + std::max(mx_[2 * node], mx_[2 * node + 1]);
  }
  size_t n_;
  std::vector<__int128> mx_, add_;
};

// gcra and token_bucket: any interval [a, b] admits at most burst + rate *
// (b - a) units, rate = limit / window. The conservative rule: admission k
// (its call's interval widened by the skew: [s_k, e_k]) was decided at some
// instant inside it, so it lies provably within [a, b] when a <= s_k and
// e_k <= b. Any [a, b] holds no more of them for its length than the one
// from the latest start to the earliest end among them, so the check is,
// for every admission i as the start and every j with e_j >= s_i as the end,
//   N(i, j) = #{k : s_k >= s_i, e_k <= e_j} <= burst + rate * (e_j - s_i),
// in units of 1/window: N * W - limit * e_j <= burst * W - limit * s_i.
// Exactly, in O(n log n): admissions taken by decreasing start; a tree over
// every end in sorted order holds, at each taken end e, (taken ends up to
// and including it) * W - limit * e, and its maximum is the left side's
// largest for the starts taken so far.
// Under-admission here is the total's shortfall: the units burst + rate *
// span (the algorithm alone, demand above the rate throughout) minus those
// admitted.
Finding bucket(std::vector<Call> calls, const Limit& l, int64_t skew_us) {
  Finding f;
  count_calls(calls, f);
  if (calls.empty()) return f;
  const int64_t burst = l.burst > 0 ? l.burst : l.limit;
  int64_t first = calls.front().t0_us, last = calls.front().t1_us;
  for (const Call& c : calls) {
    first = std::min(first, c.t0_us);
    last = std::max(last, c.t1_us);
  }
  f.allowed_by_limit =
      burst + static_cast<int64_t>(static_cast<__int128>(last - first) * l.limit / l.window_us);
  f.under_max = std::max<int64_t>(0, f.allowed_by_limit - f.admitted);
  struct Span {
    int64_t s, e;
  };
  std::vector<Span> spans;
  for (const Call& c : calls) {
    if (c.allowed) spans.push_back({c.t0_us - skew_us - first, c.t1_us + skew_us - first});
  }
  if (spans.empty()) return f;
  std::vector<size_t> by_end(spans.size()), by_start(spans.size()), place(spans.size());
  for (size_t k = 0; k < spans.size(); ++k) by_end[k] = by_start[k] = k;
  std::sort(by_end.begin(), by_end.end(), [&](size_t x, size_t y) {
    return spans[x].e != spans[y].e ? spans[x].e < spans[y].e : x < y;
  });
  for (size_t p = 0; p < by_end.size(); ++p) place[by_end[p]] = p;
  std::sort(by_start.begin(), by_start.end(),
            [&](size_t x, size_t y) { return spans[x].s > spans[y].s; });
  MaxTree tree(spans.size());
  __int128 excess = 0;  // the largest N * W - (burst * W + limit * (e_j - s_i))
  for (size_t k : by_start) {
    tree.add_from(place[k], l.window_us);
    tree.set(place[k], -static_cast<__int128>(l.limit) * spans[k].e);
    excess = std::max(excess, tree.max() + static_cast<__int128>(l.limit) * spans[k].s -
                                  static_cast<__int128>(burst) * l.window_us);
  }
  // N - floor(bound) units over it: ceil(excess / W).
  f.over_max = static_cast<int64_t>((excess + l.window_us - 1) / l.window_us);
  return f;
}

// sliding_log: no window of the limit's length, [a, a + W), holds more
// than the limit. Admission k lies provably inside it when a <= s_k and
// e_k < a + W (its interval widened by the skew); a window holds no more
// of them than the one starting at the latest such s_k, so the check is,
// for every admission i, #{k : s_k >= s_i, e_k < s_i + W} <= limit: taken
// by decreasing start, with a count tree over the sorted ends.
// Under-admission: at each denial [S, E], the log's room, limit less the
// admissions that may have been live when it was decided (begun before E
// and not ended by S - W - record_lag: a record stands at most that long
// past its use): a lower bound on what sat unused in slices.
Finding sliding_log(std::vector<Call> calls, const Limit& l, int64_t skew_us) {
  Finding f;
  count_calls(calls, f);
  f.allowed_by_limit = allowed_over_span(calls, l.limit, l.window_us, 1);
  std::vector<int64_t> starts, ends;
  for (const Call& c : calls) {
    if (!c.allowed) continue;
    starts.push_back(c.t0_us - skew_us);
    ends.push_back(c.t1_us + skew_us);
  }
  std::vector<size_t> by_start(starts.size());
  for (size_t k = 0; k < by_start.size(); ++k) by_start[k] = k;
  std::sort(by_start.begin(), by_start.end(),
            [&](size_t x, size_t y) { return starts[x] > starts[y]; });
  std::vector<int64_t> sorted_ends = ends;
  std::sort(sorted_ends.begin(), sorted_ends.end());
  std::vector<int64_t> tree(sorted_ends.size() + 1, 0);  // Fenwick counts over sorted_ends
  for (size_t k : by_start) {
    const size_t place =
        std::lower_bound(sorted_ends.begin(), sorted_ends.end(), ends[k]) - sorted_ends.begin();
    for (size_t i = place + 1; i < tree.size(); i += i & (~i + 1)) ++tree[i];
    // Taken ends below starts[k] + W.
    size_t below =
        std::lower_bound(sorted_ends.begin(), sorted_ends.end(), starts[k] + l.window_us) -
        sorted_ends.begin();
    int64_t inside = 0;
    for (; below > 0; below -= below & (~below + 1)) inside += tree[below];
    f.over_max = std::max(f.over_max, inside - l.limit);
  }
  std::vector<int64_t> sorted_starts;
  for (const Call& c : calls) {
    if (c.allowed) sorted_starts.push_back(c.t0_us);
  }
  std::sort(sorted_starts.begin(), sorted_starts.end());
  std::vector<int64_t> raw_ends;
  for (const Call& c : calls) {
    if (c.allowed) raw_ends.push_back(c.t1_us);
  }
  std::sort(raw_ends.begin(), raw_ends.end());
  for (const Call& c : calls) {
    if (c.allowed) continue;
    const int64_t begun = std::lower_bound(sorted_starts.begin(), sorted_starts.end(), c.t1_us) -
                          sorted_starts.begin();
    const int64_t gone = std::upper_bound(raw_ends.begin(), raw_ends.end(),
                                          c.t0_us - l.window_us - l.record_lag_us) -
                         raw_ends.begin();
    f.under_max = std::max(f.under_max, l.limit - (begun - gone));
  }
  return f;
}

}  // namespace

const std::vector<Promise>& promises() {
  static const std::vector<Promise> all = {
      {"fixed_window", fixed_window, false}, {"sliding_window", sliding_window, false},
      {"sliding_log", sliding_log, false},   {"gcra", bucket, true},
      {"token_bucket", bucket, true},
  };
  return all;
}

}  // namespace rl_load
