// One operation on the per-limit states of a key, for any algorithm: the
// multi-limit rules of DESIGN.md (all-or-nothing; remaining is the smallest,
// retry_after and reset_after the largest) in one place. The Lua scripts
// follow the same steps.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "rate.h"
#include "verdict.h"

namespace rl {

enum class Op { acquire, peek, refund, reset };

// Folds per-limit verdicts: `limit` comes from the one with least remaining.
inline Verdict combine(const Verdict* vs, size_t n) {
  Verdict out = vs[0];
  for (size_t i = 1; i < n; ++i) {
    const Verdict& v = vs[i];
    out.allowed = out.allowed && v.allowed;
    if (v.remaining < out.remaining) {
      out.remaining = v.remaining;
      out.limit = v.limit;
    }
    if (out.retry_after_us >= 0) {
      out.retry_after_us =
          v.retry_after_us < 0 ? -1 : std::max(out.retry_after_us, v.retry_after_us);
    }
    out.reset_after_us = std::max(out.reset_after_us, v.reset_after_us);
  }
  return out;
}

// Applies `op` to `states` (one per rate, mutated in place when the op
// records something) and returns the decision. `changed` tells the caller
// whether the states were written.
template <class Algo>
Verdict apply(Op op, std::span<typename Algo::State> states, const std::vector<Rate>& rates,
              int64_t now, int64_t cost, bool& changed) {
  const size_t n = rates.size();
  std::array<Verdict, kMaxRates> vs;  // no allocation on the hot path
  changed = false;
  if (op == Op::refund || op == Op::reset) {
    for (size_t i = 0; i < n; ++i) {
      if (op == Op::refund) {
        Algo::refund(states[i], rates[i], now, cost);
      } else {
        states[i] = typename Algo::State{};
      }
      vs[i] = Algo::decide(states[i], rates[i], now, 0);
    }
    changed = true;
    return combine(vs.data(), n);
  }
  bool all = true;
  for (size_t i = 0; i < n; ++i) {
    vs[i] = Algo::decide(states[i], rates[i], now, cost);
    all = all && vs[i].allowed;
  }
  if (all) {
    if (op == Op::acquire) {
      for (size_t i = 0; i < n; ++i) Algo::consume(states[i], rates[i], now, cost);
      changed = true;
    }
    return combine(vs.data(), n);
  }
  // Denied: nothing is consumed, so remaining and reset_after describe the
  // unchanged state; retry_after still waits for every limit. A limit that
  // denied already described its unchanged state; only those that admitted
  // are asked again (a single limit never is).
  for (size_t i = 0; i < n; ++i) {
    if (!vs[i].allowed) continue;
    const int64_t retry_after_us = vs[i].retry_after_us;
    vs[i] = Algo::decide(states[i], rates[i], now, 0);
    vs[i].retry_after_us = retry_after_us;
  }
  Verdict out = combine(vs.data(), n);
  out.allowed = false;
  return out;
}

}  // namespace rl
