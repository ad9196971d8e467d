// The random draws of the suppressed algorithm, made by the caller (the
// store's client side), never by Redis: draw k of a seed is a pure function
// of the two (splitmix64), so two limiters with the same seed that make the
// same calls draw the same numbers, on memory:// as on Redis.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <random>

#include "algorithms/suppressed.h"

namespace rl {

class DrawSource {
 public:
  // `seed` when set; else 0 under a manual clock (tests are repeatable),
  // else a random one.
  DrawSource(std::optional<uint64_t> seed, bool manual_clock)
      : seed_(seed           ? *seed
              : manual_clock ? 0
                             : random_seed()) {}

  // Uniform in [0, Suppressed::kScale). Thread-safe.
  int64_t next() const {
    uint64_t z = seed_ + (count_.fetch_add(1, std::memory_order_relaxed) + 1) * kGolden;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<int64_t>(z >> 40);  // the top 24 bits
  }

 private:
  static constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;
  static_assert(Suppressed::kScale == int64_t{1} << 24);

  static uint64_t random_seed() {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ device();
  }

  const uint64_t seed_;
  mutable std::atomic<uint64_t> count_{0};
};

}  // namespace rl
