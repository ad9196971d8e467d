// The keys a limiter was recently denied, each until its retry_after
// passes: a bounded map sharded by key hash, so callers on different keys
// rarely share a lock, and with an entry count read before any lock, so a
// limiter with nothing denied pays one atomic load per call.
//
// When a denial runs out, the first caller to see it asks the store (the
// probe) and callers of the same key that come while it is in flight wait
// for its answer, then look again: under an attack on one key the store
// sees one call per run-out denial instead of one per caller in flight.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "verdict.h"

namespace rl {

class DeniedKeys {
 public:
  // At most `capacity` keys (at least one per shard).
  explicit DeniedKeys(size_t capacity);

  enum class Found {
    denied,   // remembered: `verdict` answers the call
    unknown,  // nothing remembered: ask the store
    probe,    // the denial ran out: ask the store for the key, then end_probe
    probing,  // another caller is asking the store about the key: wait for it
  };
  struct Look {
    Found found = Found::unknown;
    Verdict verdict;        // denied: the stored verdict, retry/reset counted down
    uint64_t probe_id = 0;  // probe, probing: which probe
  };
  // What is known of key for `cost` at `now_us` (the limiter's clock).
  // `deadline_us`: the caller's deadline on the steady clock (steady_us()),
  // 0 for the store's timeout. A caller waits only for a probe that ends
  // by its own deadline: one whose deadline is no later, or, with 0, one
  // that has 0 too.
  Look lookup(std::string_view key, int64_t cost, int64_t now_us, int64_t deadline_us);
  // The store denied `cost` on key, deciding no earlier than `asked_at_us`
  // (ends a probe of the key).
  void remember(std::string_view key, int64_t cost, int64_t asked_at_us, const Verdict& denial);
  // The key may have room again (a refund or reset from this limiter; ends
  // a probe of the key).
  void forget(std::string_view key);
  // Probe `id` of key has its answer (remembered or not): its waiters look
  // again. Nothing if remember or forget ended it already.
  void end_probe(std::string_view key, uint64_t id);
  // Runs `wake` (on the thread that ends it, outside any lock) when probe
  // `id` of key ends; false, with `wake` not kept, if it has ended.
  bool on_probe_end(std::string_view key, uint64_t id, std::function<void()>& wake);
  // Blocks until probe `id` of key ends.
  void wait_probe_end(std::string_view key, uint64_t id);

  size_t size() const { return size_.load(std::memory_order_relaxed); }
  // Microseconds on the steady clock: what deadline_us counts in.
  static int64_t steady_us();

 private:
  struct Entry {
    int64_t cost = 0;         // the smallest cost known to be denied
    int64_t until_us = 0;     // denied before this instant; INT64_MAX: never admitted
    int64_t reset_at_us = 0;  // when the key was to be back to full capacity
    Verdict verdict;          // as the store answered
    // While a probe is in flight: its id, its caller's deadline and the
    // asynchronous callers waiting for it.
    bool probing = false;
    uint64_t probe_id = 0;
    int64_t probe_deadline_us = 0;
    std::vector<std::function<void()>> waiters;
  };
  struct Shard {
    std::mutex mutex;
    std::condition_variable probe_ended;
    std::unordered_map<std::string, Entry> entries;
  };
  static constexpr size_t kShards = 16;
  Shard& shard_for(std::string_view key);
  // Under shard.mutex: entry `e` stops probing; its waiters move to `wake`.
  static void end_probe_locked(Shard& shard, Entry& e, std::vector<std::function<void()>>& wake);
  void erase_locked(Shard& shard, std::unordered_map<std::string, Entry>::iterator it,
                    std::vector<std::function<void()>>& wake);
  static void run_all(std::vector<std::function<void()>>& wake);

  const size_t per_shard_;
  std::atomic<size_t> size_{0};
  std::atomic<uint64_t> next_probe_id_{1};
  std::array<Shard, kShards> shards_;
};

}  // namespace rl
