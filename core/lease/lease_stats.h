// What leases have done: relaxed counters, read as a snapshot. A limiter
// keeps its own (Limiter::lease_stats) and adds each count to its store's
// total too (StoreStats::leases), which rl_store_stats reports.
#pragma once

#include <atomic>
#include <cstdint>

namespace rl {

struct LeaseCounts {
  uint64_t leases_taken = 0;    // slices the store granted
  uint64_t units_leased = 0;    // units in them
  uint64_t units_unused = 0;    // units left in slices when their lease ended
  uint64_t units_returned = 0;  // of those, units handed back to the store
  uint64_t decisions = 0;       // calls decided from a slice, with no store call
};

class LeaseStats {
 public:
  // `total`, when given, receives every count as well (a store's sum).
  explicit LeaseStats(LeaseStats* total = nullptr) : total_(total) {}

  void taken(int64_t units) {
    leases_taken_.fetch_add(1, std::memory_order_relaxed);
    units_leased_.fetch_add(static_cast<uint64_t>(units), std::memory_order_relaxed);
    if (total_) total_->taken(units);
  }
  void ended(int64_t unused) {
    if (unused > 0)
      units_unused_.fetch_add(static_cast<uint64_t>(unused), std::memory_order_relaxed);
    if (total_) total_->ended(unused);
  }
  void returned(int64_t units) {
    if (units > 0)
      units_returned_.fetch_add(static_cast<uint64_t>(units), std::memory_order_relaxed);
    if (total_) total_->returned(units);
  }
  void decided() {
    decisions_.fetch_add(1, std::memory_order_relaxed);
    if (total_) total_->decided();
  }
  LeaseCounts snapshot() const {
    return {leases_taken_.load(std::memory_order_relaxed),
            units_leased_.load(std::memory_order_relaxed),
            units_unused_.load(std::memory_order_relaxed),
            units_returned_.load(std::memory_order_relaxed),
            decisions_.load(std::memory_order_relaxed)};
  }

 private:
  LeaseStats* total_;
  std::atomic<uint64_t> leases_taken_{0};
  std::atomic<uint64_t> units_leased_{0};
  std::atomic<uint64_t> units_unused_{0};
  std::atomic<uint64_t> units_returned_{0};
  std::atomic<uint64_t> decisions_{0};
};

}  // namespace rl
