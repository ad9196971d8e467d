// The failure policy as a store decorator: wraps a store whose calls can
// have outages (Redis) so that every limiter's backend goes through the
// circuit breaker of the node each call goes to (node_breakers.h) and, per
// limiter, on_failure decides what an outage or an open breaker gives
// (docs/failure.md).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "circuit_breaker.h"
#include "memory/memory_store.h"
#include "node_breakers.h"
#include "store.h"
#include "store_stats.h"

namespace rl {

class FailoverStore final : public Store, public std::enable_shared_from_this<FailoverStore> {
 public:
  FailoverStore(std::shared_ptr<Store> inner, BreakerOptions breaker, size_t local_max_keys);
  ~FailoverStore() override;

  std::shared_ptr<Backend> backend_for(const Policy& policy) override;
  void close() override;
  Clock& clock() override { return inner_->clock(); }
  bool post_after(int64_t delay_us, Executor::Task task) override {
    return inner_->post_after(delay_us, std::move(task));
  }
  // The local fallback decides inline, so only the inner store has threads.
  bool on_own_thread() const override { return inner_->on_own_thread(); }
  const char* scheme() const override { return inner_->scheme(); }
  DecidesWith decides_with() const override { return inner_->decides_with(); }
  bool in_process() const override { return inner_->in_process(); }
  bool closed() const override { return inner_->closed(); }

  NodeBreakers& breakers() { return breakers_; }
  // The breaker of a store of one node (one server, Sentinel's master).
  CircuitBreaker& breaker() { return breakers_.of(nullptr).breaker; }
  StoreStats* stats() override { return &stats_; }
  StatsView stats_view() override;
  std::vector<NodeInfo> nodes() override { return inner_->nodes(); }
  // The local fallback's tables, made when a limiter with on_failure=local
  // first needs them (most stores never do).
  MemoryStore& local();

 private:
  std::shared_ptr<Store> inner_;
  NodeBreakers breakers_;
  StoreStats stats_;
  const size_t local_max_keys_;
  std::mutex local_mutex_;
  std::shared_ptr<MemoryStore> local_;  // null until local() is called
};

}  // namespace rl
