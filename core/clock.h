// Where a store takes its time from, in microseconds.
#pragma once

#include <atomic>
#include <cstdint>

namespace rl {

// Times and durations stay below 2^52 us (142 years) so that Lua's doubles
// hold every value exactly.
inline constexpr int64_t kMaxTime = int64_t{1} << 52;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_us() const = 0;
  virtual bool is_manual() const { return false; }
};

// steady_clock: never jumps with wall-clock adjustments.
class MonotonicClock final : public Clock {
 public:
  int64_t now_us() const override;
};

// Time moves only when told: makes tests and the conformance suite exact.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_us = 0) : now_(start_us) {}
  int64_t now_us() const override { return now_.load(std::memory_order_acquire); }
  bool is_manual() const override { return true; }
  // Sets the time; never moves it backwards (throws invalid_arg instead).
  void set(int64_t now_us);
  void advance(int64_t delta_us);

 private:
  std::atomic<int64_t> now_;
};

}  // namespace rl
