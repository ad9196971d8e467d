// A limiter: one policy over a store. Validates every argument before it
// reaches the store, and adds the operations built from the basic ones
// (acquire_wait, batches). Bindings call these rather than rebuild them.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "lease/lease_stats.h"
#include "store.h"

namespace rl {

class LeaseBackend;
class Wait;

// Longest user key in bytes (RL_MAX_KEY_LEN).
inline constexpr size_t kMaxKeyLength = 512;

class Limiter {
 public:
  Limiter(std::shared_ptr<Store> store, const Settings& settings);

  const Policy& policy() const { return policy_; }
  // What this limiter's leases did (lease=auto); zeros when leases are off.
  LeaseCounts lease_stats() const;

  // Throw rl::Error for bad arguments; a failed store call is an Outcome.
  Outcome run(Op op, std::string_view key, int64_t cost, int64_t timeout_us = 0);
  // Acquires; while denied, waits (a timer on a store thread) for the
  // retry_after it was told and tries again, until admitted, until the next
  // attempt would start past wait_us, or at once on a manual clock. Throws
  // for bad arguments or a closed store; otherwise `done` runs exactly once,
  // never inside this call, with Code::shutdown if the store closes first.
  // The wait returned is for its caller to cancel (Wait::cancel).
  std::shared_ptr<Wait> acquire_wait_async(Call call, int64_t wait_us, Completion done);
  // The same, waited for (unsupported from a store thread: it would wait
  // for itself).
  Outcome acquire_wait(Call call, int64_t wait_us);
  std::vector<Outcome> acquire_batch(std::vector<Call> calls);  // waits
  void run_async(Call call, Completion done);
  void acquire_batch_async(std::vector<Call> calls, BatchCompletion done);

  // The checks run() applies, for callers that validate up front.
  static void check_key(std::string_view key, std::string_view what = "key");
  static void check_cost(Op op, int64_t cost, std::string_view what = "cost");
  static void check_timeout(int64_t timeout_us, std::string_view what = "timeout_us");

 private:
  std::shared_ptr<Store> store_;
  Policy policy_;
  std::shared_ptr<LeaseBackend> lease_;  // lease=auto: in front of the rest
  std::shared_ptr<Backend> backend_;
};

}  // namespace rl
