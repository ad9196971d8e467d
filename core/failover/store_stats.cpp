#include "store_stats.h"

#include <bit>

namespace rl {

size_t LatencyHistogram::bucket_of(int64_t micros) {
  const auto v = static_cast<uint64_t>(micros < 1 ? 1 : micros);
  // Values below 2^kSubBits have a bucket each; above, the top kSubBits
  // bits after the leading one pick the sub-bucket of their power of two.
  const int magnitude = std::bit_width(v) - 1;
  if (magnitude < kSubBits) return static_cast<size_t>(v);
  const uint64_t sub = (v >> (magnitude - kSubBits)) & ((1u << kSubBits) - 1);
  const size_t bucket = (static_cast<size_t>(magnitude - kSubBits + 1) << kSubBits) + sub;
  return bucket < kBuckets ? bucket : kBuckets - 1;
}

int64_t LatencyHistogram::upper_bound_of(size_t bucket) {
  if (bucket < (size_t{1} << kSubBits)) return static_cast<int64_t>(bucket);
  const int magnitude = static_cast<int>(bucket >> kSubBits) + kSubBits - 1;
  const uint64_t sub = bucket & ((1u << kSubBits) - 1);
  const uint64_t low = (uint64_t{1} << magnitude) + (sub << (magnitude - kSubBits));
  return static_cast<int64_t>(low + (uint64_t{1} << (magnitude - kSubBits)) - 1);
}

void LatencyHistogram::record(int64_t micros) {
  buckets_[bucket_of(micros)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(micros, std::memory_order_relaxed);
  int64_t seen = max_.load(std::memory_order_relaxed);
  while (micros > seen && !max_.compare_exchange_weak(seen, micros, std::memory_order_relaxed)) {
  }
}

int64_t LatencyHistogram::quantile(double q) const {
  uint64_t total = 0;
  std::array<uint64_t, kBuckets> counts;
  for (size_t i = 0; i < kBuckets; ++i)
    total += counts[i] = buckets_[i].load(std::memory_order_relaxed);
  if (total == 0) return 0;
  const auto rank = static_cast<uint64_t>(q * static_cast<double>(total) + 0.999999);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return std::min(upper_bound_of(i), max());
  }
  return max();
}

namespace {

// A thread's stripe number, given back when the thread ends: the threads
// alive at once take the lowest free numbers, so up to kStripes of them
// never share a stripe however many came and went before (numbers handed
// out in turn had a short-lived thread land on a long-lived one's stripe
// after every kStripes threads: two threads bumping one counter).
class StripeNumber {
 public:
  StripeNumber() {
    uint64_t free = ~taken_.load(std::memory_order_relaxed);
    while (free != 0) {
      const int bit = std::countr_zero(free);
      const uint64_t mask = uint64_t{1} << bit;
      if ((taken_.fetch_or(mask, std::memory_order_relaxed) & mask) == 0) {
        value = static_cast<size_t>(bit);
        mask_ = mask;
        return;
      }
      free = ~taken_.load(std::memory_order_relaxed);
    }
    // More than 64 threads alive: any stripe, in turn.
    static std::atomic<size_t> next{0};
    value = next.fetch_add(1, std::memory_order_relaxed);
  }
  ~StripeNumber() {
    if (mask_ != 0) taken_.fetch_and(~mask_, std::memory_order_relaxed);
  }
  StripeNumber(const StripeNumber&) = delete;
  StripeNumber& operator=(const StripeNumber&) = delete;

  size_t value = 0;

 private:
  static inline std::atomic<uint64_t> taken_{0};
  uint64_t mask_ = 0;
};

// The number's owner is looked up once per thread; the number itself is a
// plain thread_local, read per call without an initialization check.
constexpr size_t kNoStripe = ~size_t{0};
thread_local size_t t_stripe = kNoStripe;

[[gnu::noinline]] size_t take_stripe_number() {
  thread_local const StripeNumber number;
  t_stripe = number.value;
  return t_stripe;
}

}  // namespace

StoreStats::Stripe& StoreStats::stripe() {
  const size_t number = t_stripe != kNoStripe ? t_stripe : take_stripe_number();
  return stripes_[number % kStripes];
}

StoreStats::Snapshot StoreStats::snapshot() const {
  Snapshot out;
  for (const Stripe& s : stripes_) {
    for (size_t i = 0; i < kSources; ++i) {
      out.allowed[i] += s.allowed[i].load(std::memory_order_relaxed);
      out.denied[i] += s.denied[i].load(std::memory_order_relaxed);
    }
    for (size_t i = 0; i < kCodes; ++i)
      out.failures[i] += s.failures[i].load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace rl
