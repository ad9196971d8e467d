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

// gcra and token_bucket: any interval of length d holds at most
// burst + d * limit / window units. For admissions in end order j, an
// interval from admission i's start to j's end holds j - i + 1 of them
// (each began no earlier than i's end less the longest call), so the
// excess is f(j) - g(i) - burst with a running minimum of g.
Finding bucket(std::vector<Call> calls, const Limit& l, int64_t skew_us) {
  Finding f;
  count_calls(calls, f);
  if (calls.empty()) return f;
  const long double rate = static_cast<long double>(l.limit) / l.window_us;
  const int64_t burst = l.burst > 0 ? l.burst : l.limit;
  std::vector<Call> admitted;
  int64_t widest = 0, first = calls.front().t0_us, last = calls.front().t1_us;
  for (const Call& c : calls) {
    first = std::min(first, c.t0_us);
    last = std::max(last, c.t1_us);
    if (!c.allowed) continue;
    admitted.push_back(c);
    widest = std::max(widest, c.t1_us - c.t0_us);
  }
  f.allowed_by_limit = burst + static_cast<int64_t>((last - first) * rate);
  std::sort(admitted.begin(), admitted.end(),
            [](const Call& a, const Call& b) { return a.t1_us < b.t1_us; });
  long double lowest_start = 1e300L, excess = 0;
  for (size_t j = 0; j < admitted.size(); ++j) {
    const long double start =
        static_cast<long double>(j) - (admitted[j].t1_us - skew_us - widest - first) * rate;
    lowest_start = std::min(lowest_start, start);
    const long double end =
        static_cast<long double>(j) + 1 - (admitted[j].t1_us + skew_us - first) * rate;
    excess = std::max(excess, end - lowest_start - burst);
  }
  f.over_max = excess > 1e-9L ? static_cast<int64_t>(excess + 1 - 1e-9L) : 0;
  // Under-admission: the bucket's level from the admissions alone (each at
  // its call's start, the earliest it can have been), read at each denial's end.
  std::vector<std::pair<int64_t, bool>> events;  // (time, admitted)
  for (const Call& c : calls) events.emplace_back(c.allowed ? c.t0_us : c.t1_us, c.allowed);
  std::sort(events.begin(), events.end());
  long double level = burst;
  int64_t at = first;
  for (const auto& [t, allowed] : events) {
    level = std::min<long double>(burst, level + (t - at) * rate);
    at = t;
    if (allowed) {
      level -= 1;
    } else {
      f.under_max = std::max(f.under_max, static_cast<int64_t>(level));
    }
  }
  return f;
}

}  // namespace

const std::vector<Promise>& promises() {
  static const std::vector<Promise> all = {
      {"fixed_window", fixed_window},
      {"sliding_window", sliding_window},
      {"gcra", bucket},
      {"token_bucket", bucket},
  };
  return all;
}

}  // namespace rl_load
