#include "clock.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "error.h"

namespace rl {

int64_t MonotonicClock::now_us() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void ManualClock::set(int64_t now_us) {
  int64_t current = now_.load(std::memory_order_acquire);
  if (now_us < current) {
    fail_invalid("now_us: " + std::to_string(now_us) + " is before the clock's time " +
                 std::to_string(current) + "; time never goes backwards");
  }
  if (now_us > kMaxTime) fail_invalid("now_us: beyond 2^52 microseconds");
  while (!now_.compare_exchange_weak(current, std::max(current, now_us))) {
  }
}

void ManualClock::advance(int64_t delta_us) {
  if (delta_us < 0) fail_invalid("delta_us: must not be negative");
  if (delta_us > kMaxTime || now_.load() + delta_us > kMaxTime) {
    fail_invalid("delta_us: moves the clock beyond 2^52 microseconds");
  }
  now_.fetch_add(delta_us, std::memory_order_acq_rel);
}

}  // namespace rl
