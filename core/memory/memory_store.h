// memory://: state in this process. Keys are spread over shards, each with
// its own lock, so threads on different keys rarely contend. A key whose
// state has fully decayed is the same as no key: shards sweep such keys
// when they grow, so memory stays within about twice the live keys, and a
// table never holds more than max_keys (docs/algorithms.md, "Memory store").
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "executor.h"
#include "store.h"

namespace rl {

class MemoryStore final : public Store, public std::enable_shared_from_this<MemoryStore> {
 public:
  // max_keys: keys per limiter policy (the setting; its default is the
  // settings table's).
  MemoryStore(std::unique_ptr<Clock> clock, size_t max_keys);
  ~MemoryStore() override;

  std::shared_ptr<Backend> backend_for(const Policy& policy) override;
  void close() override;
  Clock& clock() override { return *clock_; }
  StoreStats* stats() override { return &stats_; }
  bool post_after(int64_t delay_us, Executor::Task task) override {
    return !closed() && executor_.post_after(std::chrono::microseconds(delay_us), std::move(task));
  }
  bool on_own_thread() const override { return executor_.on_own_thread(); }
  const char* scheme() const override { return "memory"; }
  bool in_process() const override { return true; }

  bool closed() const override { return closed_.load(std::memory_order_acquire); }
  Executor& executor() { return executor_; }
  // Keys held across all policies (tests check the eviction bound with it).
  size_t key_count();

  class Table;  // the state of one policy identity

 private:
  std::unique_ptr<Clock> clock_;
  const size_t max_keys_;
  StoreStats stats_;
  std::atomic<bool> closed_{false};
  Executor executor_;
  std::mutex tables_mutex_;
  std::map<std::string, std::shared_ptr<Table>> tables_;  // by Policy::identity()
};

}  // namespace rl
