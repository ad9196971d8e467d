// Suppressed: a sliding window of sub-windows that counts every call (T)
// and the accepted ones (A). While every call offered in the window fits the
// soft limit (`limit`) calls are admitted outright; above the hard limit
// (`burst`: limit * hard_limit_factor) they are denied; otherwise each is
// admitted with a probability that steers the accepted rate to the soft
// limit (soft / the observed offered rate), paced within each sub-window so
// that the admissions are spread, not clumped (docs/algorithms.md has the
// exact rules). The random draw comes with the call (Chance), so the memory
// store and the Lua script decide alike, draw for draw.
#pragma once

#include <deque>
#include <span>
#include <vector>

#include "algorithms/decide.h"
#include "config/rate.h"
#include "verdict.h"

namespace rl {

// What a suppressed call brings besides its cost.
struct Chance {
  int64_t draw = 0;             // uniform in [0, Suppressed::kScale)
  int64_t factor_reuse_us = 0;  // how long a computed factor is reused
};

struct Suppressed {
  // Probabilities are whole multiples of 1 / kScale: a call under overload
  // is admitted when draw < its threshold, in [0, kScale].
  static constexpr int64_t kScale = int64_t{1} << 24;

  struct Bucket {
    int64_t index;     // now / granularity when it was counted
    int64_t total;     // every call's cost (saturates at kMaxLimit)
    int64_t accepted;  // the admitted calls' cost
  };
  struct State {
    std::deque<Bucket> buckets;  // oldest first
    int64_t factor_until = 0;    // the cached `base` holds while now < factor_until
    int64_t base = 0;            // admit probability soft / observed rate, in 1 / kScale
  };
  static constexpr const char* name = "suppressed";

  // The whole operation over every limit's state (all-or-nothing, as
  // decide.h's apply): one draw decides every limit that is in its band.
  // r.burst is the hard limit; r.granularity_us divides r.window_us, which
  // is whole seconds (checked by the policy).
  static Verdict apply(Op op, std::span<State> states, const std::vector<Rate>& rates, int64_t now,
                       int64_t cost, const Chance& chance, bool& changed);
  static int64_t idle_at(const State& s, const Rate& r);
};

}  // namespace rl
