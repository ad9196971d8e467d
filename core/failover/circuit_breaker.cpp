#include "circuit_breaker.h"

namespace rl {

CircuitBreaker::Permit CircuitBreaker::admit() {
  // The healthy path takes no lock.
  if (state() == BreakerState::closed) return Permit::call;
  std::lock_guard lock(mutex_);
  switch (state()) {
    case BreakerState::closed: return Permit::call;
    case BreakerState::open:
      if (clock_.now_us() - opened_at_us_ < options_.cooldown_us) return Permit::reject;
      state_.store(BreakerState::half_open, std::memory_order_release);
      probing_ = true;
      return Permit::probe;
    case BreakerState::half_open:
      if (probing_) return Permit::reject;
      probing_ = true;
      return Permit::probe;
  }
  return Permit::reject;
}

void CircuitBreaker::on_answer(Permit permit) {
  if (permit == Permit::probe) {
    std::lock_guard lock(mutex_);
    probing_ = false;
    consecutive_.store(0, std::memory_order_relaxed);
    state_.store(BreakerState::closed, std::memory_order_release);
    return;
  }
  if (consecutive_.load(std::memory_order_relaxed) != 0) {
    consecutive_.store(0, std::memory_order_relaxed);
  }
}

void CircuitBreaker::on_outage(Permit permit) {
  std::lock_guard lock(mutex_);
  if (permit == Permit::probe) {
    probing_ = false;
    open_locked();
    return;
  }
  // Calls that started before the breaker opened may still end in outages.
  if (state() != BreakerState::closed) return;
  if (options_.failures == 0) return;  // breaker_failures=0: never opens
  if (consecutive_.fetch_add(1, std::memory_order_relaxed) + 1 >= options_.failures) {
    open_locked();
  }
}

void CircuitBreaker::open_locked() {
  opened_at_us_ = clock_.now_us();
  consecutive_.store(0, std::memory_order_relaxed);
  state_.store(BreakerState::open, std::memory_order_release);
  times_opened_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace rl
