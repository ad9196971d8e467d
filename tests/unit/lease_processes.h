// Random processes that lease from one key's state, for the tests that
// check an algorithm's promise with leases (lease_hold_test.cpp,
// lease_log_test.cpp): each uses its slice until its lease ends (no later
// than grant + hold), releases the rest or not (a process that died), beside
// plain acquires. Returns every use, for the caller to check against its
// algorithm's promise.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "algorithms/decide.h"
#include "verdict.h"

namespace rl_test {

// One key's state of `Algo` under rl::apply, with the calls a lease makes.
template <class Algo>
struct LeasedState {
  explicit LeasedState(rl::Rate rate) : rates{rate}, states(1) {}
  rl::Verdict run(rl::Op op, int64_t now, int64_t cost, const rl::LeaseArgs& lease = {}) {
    bool changed = false;
    return rl::apply<Algo>(op, states, rates, now, cost, changed, lease);
  }
  rl::Verdict acquire(int64_t now, int64_t cost = 1) { return run(rl::Op::acquire, now, cost); }
  rl::Verdict peek(int64_t now) { return run(rl::Op::peek, now, 0); }
  rl::Verdict lease(int64_t now, int64_t units, int64_t hold_us) {
    return run(rl::Op::lease, now, units, {0, 0, hold_us});
  }
  // True when the state still held the slice.
  bool release(int64_t now, int64_t unused, int64_t tag, int64_t slice) {
    return run(rl::Op::release, now, unused, {tag, slice, 0}).next_retry_after_us == 1;
  }
  std::vector<rl::Rate> rates;
  std::vector<typename Algo::State> states;
};

struct LeaseSteps {
  int steps = 3000;
  int64_t pause_us = 1;    // the most a step usually waits
  int64_t most_cost = 1;   // a plain call's largest cost
  int64_t most_slice = 1;  // a slice's largest size
};

// `target` is a LeasedState (or has its acquire, lease and release).
// Returns (time, units) per use.
template <class Target>
std::vector<std::pair<int64_t, int64_t>> random_lease_uses(Target& target, const LeaseSteps& how,
                                                           int64_t hold_us, uint32_t seed) {
  struct Slice {
    int64_t size = 0, left = 0, tag = 0, until = 0;
  };
  std::mt19937 rng(seed);
  std::vector<Slice> slices(4);
  std::vector<std::pair<int64_t, int64_t>> uses;
  int64_t now = 0;
  for (int step = 0; step < how.steps; ++step) {
    // Now and then a pause as long as a lease, in which the state refills
    // while rests wait in slices.
    const int64_t pause = rng() % 6 == 0 ? hold_us : how.pause_us;
    now += std::uniform_int_distribution<int64_t>(0, pause)(rng);
    Slice& s = slices[rng() % slices.size()];
    if (s.size > 0 && (now >= s.until || s.left == 0)) {
      if (rng() % 8 != 0) target.release(now, s.left, s.tag, s.size);  // 1 in 8 dies
      s = Slice{};
    }
    // A slice's rest used at once, now and then: the late use that must
    // still be covered.
    const int64_t cost =
        s.left > 0 && rng() % 4 == 0 ? s.left : 1 + static_cast<int64_t>(rng() % how.most_cost);
    if (s.size > 0 && s.left >= cost) {
      s.left -= cost;
      uses.emplace_back(now, cost);
    } else if (rng() % 3 == 0) {
      if (target.acquire(now, cost).allowed) uses.emplace_back(now, cost);
    } else if (s.size == 0) {
      const int64_t size = 1 + static_cast<int64_t>(rng() % how.most_slice);
      const rl::Verdict v = target.lease(now, size, hold_us);
      if (v.allowed) s = Slice{size, size, v.next_retry_after_us, now + hold_us};
    }
  }
  return uses;
}

}  // namespace rl_test
