// The keys a limiter was recently denied, each until its retry_after
// passes: a bounded map sharded by key hash, so callers on different keys
// rarely share a lock, and with an entry count read before any lock, so a
// limiter with nothing denied pays one atomic load per call.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "verdict.h"

namespace rl {

class DeniedKeys {
 public:
  // At most `capacity` keys (at least one per shard).
  explicit DeniedKeys(size_t capacity);

  // A denial remembered for key that also holds for `cost` at `now_us`:
  // the stored verdict with retry_after and reset_after counted down.
  std::optional<Verdict> lookup(std::string_view key, int64_t cost, int64_t now_us);
  // The store denied `cost` on key, deciding no earlier than `asked_at_us`.
  void remember(std::string_view key, int64_t cost, int64_t asked_at_us, const Verdict& denial);
  // The key may have room again (a refund or reset from this limiter).
  void forget(std::string_view key);

  size_t size() const { return size_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    int64_t cost;         // the smallest cost known to be denied
    int64_t until_us;     // denied before this instant; INT64_MAX: never admitted
    int64_t reset_at_us;  // when the key was to be back to full capacity
    Verdict verdict;      // as the store answered
  };
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, Entry> entries;
  };
  static constexpr size_t kShards = 16;
  Shard& shard_for(std::string_view key);

  const size_t per_shard_;
  std::atomic<size_t> size_{0};
  std::array<Shard, kShards> shards_;
};

}  // namespace rl
