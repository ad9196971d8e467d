// A circuit breaker for one store node. Closed: every call goes to the
// store. After `failures` consecutive outages it opens: calls take the
// failure policy at once, without waiting for a timeout. After `cooldown_us`
// it lets one probe through (half-open); the probe's success closes it, its
// outage opens it again for another cool-down.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "clock.h"

namespace rl {

struct BreakerOptions {
  // The store settings breaker_failures and breaker_cooldown_ms set both;
  // these are the settings' defaults (core/config/settings.cpp).
  int64_t failures = 5;          // consecutive outages that open it; 0: never
  int64_t cooldown_us = 500000;  // open this long before a probe
};

enum class BreakerState : int { closed = 0, open = 1, half_open = 2 };

inline constexpr int kBreakerStateCount = 3;

// "closed", "open", "half_open" (rl_breaker_state_name); nullptr for
// anything else.
inline const char* breaker_state_name(int state) {
  constexpr const char* kNames[kBreakerStateCount] = {"closed", "open", "half_open"};
  return state >= 0 && state < kBreakerStateCount ? kNames[state] : nullptr;
}

class CircuitBreaker {
 public:
  CircuitBreaker(BreakerOptions options, const Clock& clock) : options_(options), clock_(clock) {}

  // What one call may do now.
  enum class Permit { call, probe, reject };
  Permit admit();
  // The end of a call admitted with `permit`: an outage, or any answer.
  void on_answer(Permit permit);
  void on_outage(Permit permit);

  BreakerState state() const { return state_.load(std::memory_order_acquire); }
  // How often it went from closed or half-open to open.
  int64_t times_opened() const { return times_opened_.load(std::memory_order_relaxed); }

 private:
  void open_locked();

  const BreakerOptions options_;
  const Clock& clock_;
  std::atomic<BreakerState> state_{BreakerState::closed};
  std::atomic<int64_t> consecutive_{0};  // outages in a row while closed
  std::atomic<int64_t> times_opened_{0};
  std::mutex mutex_;          // guards the transitions below
  int64_t opened_at_us_ = 0;  // when it last opened
  bool probing_ = false;      // a half-open probe is in flight
};

}  // namespace rl
