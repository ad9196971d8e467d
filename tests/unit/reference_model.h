// Brute-force reference models of the five algorithms, written from the
// definitions in docs/algorithms.md and independent of core/: a model keeps every
// admitted request and answers each question by replaying that history.
//
// Each algorithm only says whether a request of `cost` is admitted at `now`
// given the history (`admits`). Every decision field follows from that one
// predicate, by search rather than by formula:
//   allowed      admits(now, cost)
//   remaining    the largest n <= capacity with admits(now, n), afterwards
//   retry_after  the smallest d with admits(now + d, cost); -1 if cost > capacity
//   reset_after  the smallest d with admits(now + d, capacity), afterwards
// (capacity: burst for gcra and token_bucket, limit for the others).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rl_test {

using i128 = __int128;

struct ModelRate {
  int64_t limit = 0;
  int64_t window_us = 0;
  int64_t burst = 0;           // gcra, token_bucket
  int64_t granularity_us = 0;  // sliding_window
};

struct ModelDecision {
  bool allowed = false;
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t retry_after_us = 0;
  int64_t reset_after_us = 0;
};

struct Admitted {
  int64_t at;
  int64_t cost;
};

enum class ModelKind { bucket, sliding_log, sliding_window, fixed_window };

class ReferenceModel {
 public:
  // gcra and token_bucket are both the exact continuous bucket (kind bucket).
  ReferenceModel(ModelKind kind, ModelRate rate) : kind_(kind), rate_(rate) {}

  int64_t capacity() const { return kind_ == ModelKind::bucket ? rate_.burst : rate_.limit; }
  const std::vector<Admitted>& history() const { return history_; }

  // An acquire (record = true) or a peek (record = false) at `now`, which
  // never goes backwards.
  ModelDecision decide(int64_t now, int64_t cost, bool record) {
    ModelDecision d;
    d.limit = rate_.limit;
    d.allowed = cost <= capacity() && admits(now, cost);
    if (d.allowed && record && cost > 0) history_.push_back({now, cost});
    if (cost > capacity()) {
      d.retry_after_us = -1;
    } else if (!d.allowed) {
      d.retry_after_us = first_delay(now, cost);
    }
    // A peek reports the state an acquire would have left.
    ReferenceModel after = *this;
    if (d.allowed && !record && cost > 0) after.history_.push_back({now, cost});
    d.remaining = after.largest_admitted(now);
    d.reset_after_us = after.first_delay(now, capacity());
    return d;
  }

  // Would a request of `cost` be admitted at `now`, after the history?
  bool admits(int64_t now, int64_t cost) const {
    if (cost > capacity()) return false;
    switch (kind_) {
      case ModelKind::bucket: return bucket_admits(now, cost);
      case ModelKind::sliding_log: return sliding_log_admits(now, cost);
      case ModelKind::sliding_window: return sliding_window_admits(now, cost);
      case ModelKind::fixed_window: return fixed_window_admits(now, cost);
    }
    return false;
  }

 private:
  // The bucket drains at limit/window. Its content at `now` is the largest
  // cost admitted since any past instant t_j minus what drained since then:
  // admit iff for every j, (cost since t_j + cost) - (now - t_j) * rate <= burst.
  bool bucket_admits(int64_t now, int64_t cost) const {
    const i128 L = rate_.limit, W = rate_.window_us, B = rate_.burst;
    i128 since = 0;  // cost admitted at or after history_[j].at
    for (size_t j = history_.size(); j-- > 0;) {
      since += history_[j].cost;
      if ((since + cost) * W - i128(now - history_[j].at) * L > B * W) return false;
    }
    return true;
  }

  // Entries younger than one window count.
  bool sliding_log_admits(int64_t now, int64_t cost) const {
    int64_t used = 0;
    for (const Admitted& a : history_) {
      if (now - a.at < rate_.window_us) used += a.cost;
    }
    return used + cost <= rate_.limit;
  }

  // Sub-windows of granularity g; the n = window/g newest (the current one
  // included) count in full, the one before them by the fraction of it that
  // still lies inside (now - window, now].
  bool sliding_window_admits(int64_t now, int64_t cost) const {
    const int64_t g = rate_.granularity_us, n = rate_.window_us / g;
    const int64_t current = now / g, offset = now % g;
    i128 full = 0, partial = 0;
    for (const Admitted& a : history_) {
      const int64_t sub = a.at / g;
      if (sub > current - n) full += a.cost;
      if (sub == current - n) partial += a.cost;
    }
    return partial * (g - offset) + (full + cost) * g <= i128(rate_.limit) * g;
  }

  // Windows aligned to multiples of the window length.
  bool fixed_window_admits(int64_t now, int64_t cost) const {
    int64_t used = 0;
    for (const Admitted& a : history_) {
      if (a.at / rate_.window_us == now / rate_.window_us) used += a.cost;
    }
    return used + cost <= rate_.limit;
  }

  int64_t largest_admitted(int64_t now) const {
    int64_t lo = 0, hi = capacity();  // admits(now, 0) holds after every decision
    if (!admits(now, 0)) throw std::logic_error("model: usage above capacity");
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (admits(now, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  }

  // Smallest d >= 0 with admits(now + d, cost); usage never grows while
  // nothing is admitted, so the predicate is monotone in d.
  int64_t first_delay(int64_t now, int64_t cost) const {
    int64_t lo = 0, hi = horizon();
    if (!admits(now + hi, cost)) throw std::logic_error("model: never admitted");
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (admits(now + mid, cost))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  }

  // A delay after which any state has fully drained.
  int64_t horizon() const {
    const i128 drain = (i128(capacity()) * rate_.window_us + rate_.limit - 1) / rate_.limit;
    return static_cast<int64_t>(drain) + 2 * rate_.window_us + 2 * rate_.granularity_us + 2;
  }

  ModelKind kind_;
  ModelRate rate_;
  std::vector<Admitted> history_;
};

}  // namespace rl_test
