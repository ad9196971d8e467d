// One operation on the per-limit states of a key, for any algorithm: the
// multi-limit rules of docs/algorithms.md (all-or-nothing; remaining is the smallest,
// retry_after and reset_after the largest) in one place. The Lua scripts
// follow the same steps.
#pragma once

#include <algorithm>
#include <concepts>
#include <span>
#include <vector>

#include "config/rate.h"
#include "verdict.h"

namespace rl {

// lease and release are a lease's grant and return (core/lease/; one limit
// of an algorithm that leases): lease acquires a slice and marks the
// state (gcra and token_bucket: holds its units, lease_hold.h; sliding_log
// records it at the lease's end), and its verdict's next_retry_after_us
// carries the grant's tag instead (the store's time of the grant;
// sliding_log: its record's instant); release gives a slice's unused units back where that is exact
// (the grant time comes as `granted_at`); its verdict's next_retry_after_us
// is 1 when the state still held the slice, else 0.
enum class Op { acquire, peek, refund, reset, lease, release };

// What a lease's grant and return carry besides the cost.
struct LeaseArgs {
  int64_t granted_at = 0;  // release: the grant's tag (its store time; sliding_log: its record's)
  int64_t slice = 0;       // release: the slice's whole size
  int64_t hold_us = 0;     // lease: the longest the slice may be used
};

// sliding_log records a slice ahead, at its lease's end (record_lease
// returns the record's instant, the grant's tag); the others consume it now
// and mark the state (mark_lease).
template <class Algo>
concept LeasesAhead = requires(typename Algo::State& s, const Rate& r, int64_t t) {
  { Algo::record_lease(s, r, t, t, t) } -> std::same_as<int64_t>;
};

template <class Algo>
concept Leasable = requires(typename Algo::State& s, const Rate& r, int64_t t) {
  { Algo::may_lease(s, t, t) } -> std::same_as<bool>;
  Algo::give_back(s, r, t, t, t, t);
}
&&(LeasesAhead<Algo> || requires(typename Algo::State & s, const Rate& r, int64_t t) {
  Algo::mark_lease(s, r, t, t, t);
});

// Folds per-limit verdicts as they come: `limit` and `limit_index` come
// from the one with the least remaining. (No array of verdicts: zeroing one
// per call cost a third of a memory-store acquire.)
class Fold {
 public:
  // Verdicts come in the order of the limits: the count is the index.
  void add(const Verdict& v) {
    const int index = added_++;
    if (empty_) {
      out_ = v;
      out_.limit_index = index;
      empty_ = false;
      return;
    }
    out_.allowed = out_.allowed && v.allowed;
    if (v.remaining < out_.remaining) {
      out_.remaining = v.remaining;
      out_.limit = v.limit;
      out_.limit_index = index;
    }
    if (out_.retry_after_us >= 0) {
      out_.retry_after_us =
          v.retry_after_us < 0 ? -1 : std::max(out_.retry_after_us, v.retry_after_us);
    }
    out_.reset_after_us = std::max(out_.reset_after_us, v.reset_after_us);
  }
  const Verdict& result() const { return out_; }

 private:
  Verdict out_;
  bool empty_ = true;
  int added_ = 0;
};

// Applies `op` to `states` (one per rate, mutated in place when the op
// records something) and returns the decision. `changed` tells the caller
// whether the states were written.
template <class Algo>
Verdict apply(Op op, std::span<typename Algo::State> states, const std::vector<Rate>& rates,
              int64_t now, int64_t cost, bool& changed, const LeaseArgs& lease = {}) {
  const size_t n = rates.size();
  changed = false;
  if (op == Op::lease || op == Op::release) {
    if constexpr (Leasable<Algo>) {
      if (n == 1 && op == Op::release) {
        const bool taken =
            Algo::give_back(states[0], rates[0], now, cost, lease.granted_at, lease.slice);
        changed = taken;
        Verdict v = Algo::decide(states[0], rates[0], now, 0);
        v.next_retry_after_us = taken ? 1 : 0;  // whether the units were taken off
        return v;
      }
      if (n == 1) {
        Verdict v = Algo::decide(states[0], rates[0], now, cost);
        if (v.allowed && !Algo::may_lease(states[0], now, lease.hold_us)) {
          // Holds of another length still live (limiters on one key with
          // different lease_ms): no slice; the call goes to the store alone.
          v = Algo::decide(states[0], rates[0], now, 0);
          v.allowed = false;
          return v;
        }
        if (v.allowed) {
          if constexpr (LeasesAhead<Algo>) {
            const int64_t at = Algo::record_lease(states[0], rates[0], now, cost, lease.hold_us);
            v.reset_after_us = at + rates[0].window_us - now;  // the record leaves then
            v.next_retry_after_us = at;
          } else {
            Algo::consume(states[0], rates[0], now, cost);
            Algo::mark_lease(states[0], rates[0], now, cost, lease.hold_us);
            v.next_retry_after_us = now;
          }
          changed = true;
        }
        return v;
      }
    }
    // Nothing leases here (no lease asks for it): a return changes nothing,
    // a grant is an acquire whose units are never returned.
    if (op == Op::release) {
      op = Op::peek;
      cost = 0;
    } else {
      op = Op::acquire;
    }
  }
  if (op == Op::refund || op == Op::reset) {
    Fold after;
    for (size_t i = 0; i < n; ++i) {
      if (op == Op::refund) {
        Algo::refund(states[i], rates[i], now, cost);
      } else {
        states[i] = typename Algo::State{};
      }
      after.add(Algo::decide(states[i], rates[i], now, 0));
    }
    changed = true;
    return after.result();
  }
  if (n == 1) {
    // The usual single limit: its verdict is the decision, with no fold
    // (copying verdicts through one was a sixth of a memory:// acquire).
    const Verdict v = Algo::decide(states[0], rates[0], now, cost);
    if (v.allowed && op == Op::acquire) {
      Algo::consume(states[0], rates[0], now, cost);
      changed = true;
    }
    return v;
  }
  Fold fold;
  uint32_t admitted = 0;  // bit i: limit i admits (at most kMaxRates limits)
  for (size_t i = 0; i < n; ++i) {
    const Verdict v = Algo::decide(states[i], rates[i], now, cost);
    if (v.allowed) admitted |= 1u << i;
    fold.add(v);
  }
  if (admitted == (1u << n) - 1) {
    if (op == Op::acquire) {
      for (size_t i = 0; i < n; ++i) Algo::consume(states[i], rates[i], now, cost);
      changed = true;
    }
    return fold.result();
  }
  // Denied: nothing is consumed, so remaining and reset_after describe the
  // unchanged state; retry_after still waits for every limit. A limit that
  // denied already describes its unchanged state, so when none admitted the
  // fold is the answer; otherwise the admitting ones are asked again.
  if (admitted == 0) return fold.result();
  Fold denied;
  for (size_t i = 0; i < n; ++i) {
    if (admitted & (1u << i)) {
      Verdict unchanged = Algo::decide(states[i], rates[i], now, 0);
      unchanged.retry_after_us = 0;
      denied.add(unchanged);
    } else {
      denied.add(Algo::decide(states[i], rates[i], now, cost));
    }
  }
  Verdict out = denied.result();
  out.allowed = false;
  return out;
}

}  // namespace rl
