// A limiter: one policy over a store. Validates every argument before it
// reaches the store, and adds the operations built from the basic ones
// (acquire_wait, batches).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "store.h"

namespace rl {

// Longest user key in bytes (RL_MAX_KEY_LEN).
inline constexpr size_t kMaxKeyLength = 512;

class Limiter {
 public:
  Limiter(std::shared_ptr<Store> store, const Settings& settings);

  const Policy& policy() const { return policy_; }

  // Throw rl::Error for bad arguments; a failed store call is an Outcome.
  Outcome run(Op op, std::string_view key, int64_t cost);
  // Acquires; while denied, sleeps for the retry_after it was told, until
  // admitted or until the next attempt would start past timeout_us.
  Outcome acquire_wait(std::string_view key, int64_t cost, int64_t timeout_us);
  std::vector<Outcome> acquire_batch(std::vector<Call> calls);  // waits
  void run_async(Call call, Completion done);
  void acquire_batch_async(std::vector<Call> calls, BatchCompletion done);

  // The checks run() applies, for callers that validate up front.
  static void check_key(std::string_view key, std::string_view what = "key");
  static void check_cost(Op op, int64_t cost, std::string_view what = "cost");

 private:
  std::shared_ptr<Store> store_;
  Policy policy_;
  std::shared_ptr<Backend> backend_;
};

}  // namespace rl
