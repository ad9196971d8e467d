// The denied-key cache (limiter setting deny_cache_keys): a Backend in front
// of the store's. Once the store denies a key for cost c with retry_after
// R, acquires and peeks of that key with cost >= c are denied here until R
// passes, with no store call (source deny_cache). It only denies what the
// store would: R is counted from before the store decided, and a refund or
// reset through this limiter forgets the key. A refund or reset by another
// process is not seen: until R passes this limiter may deny what the store
// would now admit (docs/algorithms.md). Once a denial runs out, one call
// asks the store and the key's calls that come meanwhile wait for its
// answer (DeniedKeys). Batches pass through.
#pragma once

#include <memory>

#include "denied_keys.h"
#include "store.h"

namespace rl {

class DenyCacheBackend final : public Backend,
                               public std::enable_shared_from_this<DenyCacheBackend> {
 public:
  DenyCacheBackend(std::shared_ptr<Store> store, std::shared_ptr<Backend> inner, size_t capacity);

  Outcome run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) override;
  void run_async(Call call, Completion done) override;
  void run_batch_async(std::vector<Call> calls, BatchCompletion done) override;
  std::vector<Outcome> run_batch(std::vector<Call> calls) override;

 private:
  // A remembered denial as the call's outcome, counted in the store's
  // statistics.
  Outcome answered_here(const Verdict& v);
  void learn(Op op, std::string_view key, int64_t cost, int64_t asked_at_us, const Outcome& o);

  std::shared_ptr<Store> store_;
  std::shared_ptr<Backend> inner_;
  DeniedKeys denied_;
};

}  // namespace rl
