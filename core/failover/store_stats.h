// What a store has done since it opened: decisions by source and verdict,
// failures by status, and a histogram of store round-trip latencies. All
// counters are relaxed atomics: cheap to bump from any thread, read as a
// snapshot that may be a few calls behind.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "error.h"
#include "lease/lease_stats.h"
#include "verdict.h"

namespace rl {

inline constexpr size_t kSources = kSourceCount;  // Source values
inline constexpr size_t kCodes = 16;              // room for Code values to grow

// Round trips in microseconds, in log-linear buckets: 8 per power of two
// (at most 12.5% wide) up to 2^30 us (about 18 minutes).
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 3;
  static constexpr size_t kBuckets = (27 + 1) << kSubBits;

  void record(int64_t micros);
  // The upper bound of the bucket holding the q-th quantile (0 < q <= 1);
  // 0 when nothing was recorded.
  int64_t quantile(double q) const;
  int64_t max() const { return max_.load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  int64_t sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  static size_t bucket_of(int64_t micros);
  static int64_t upper_bound_of(size_t bucket);

  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<int64_t> sum_{0};
  std::atomic<int64_t> max_{0};
};

// Counters striped over cache lines by thread, so threads deciding at once
// do not contend on one line; a snapshot sums the stripes.
class StoreStats {
 public:
  struct Snapshot {
    std::array<uint64_t, kSources> allowed{};
    std::array<uint64_t, kSources> denied{};
    std::array<uint64_t, kCodes> failures{};  // by Code
  };

  void count(Code code, const Verdict& v) {
    Stripe& s = stripe();
    std::atomic<uint64_t>* counter;
    if (code != Code::ok) {
      counter = &s.failures[static_cast<size_t>(code) % kCodes];
    } else {
      counter = &(v.allowed ? s.allowed : s.denied)[static_cast<size_t>(v.source) % kSources];
    }
    counter->fetch_add(1, std::memory_order_relaxed);
  }
  Snapshot snapshot() const;

  LatencyHistogram round_trips;
  LeaseStats leases;  // every lease of the store's limiters

 private:
  struct alignas(64) Stripe {
    std::array<std::atomic<uint64_t>, kSources> allowed{};
    std::array<std::atomic<uint64_t>, kSources> denied{};
    std::array<std::atomic<uint64_t>, kCodes> failures{};
  };
  static constexpr size_t kStripes = 8;
  Stripe& stripe();

  std::array<Stripe, kStripes> stripes_;
};

}  // namespace rl
