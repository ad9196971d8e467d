// A store keeps rate-limit state (memory://, redis://). A limiter talks to it
// through a Backend: the store's view of one policy, prepared once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/decide.h"
#include "clock.h"
#include "config/policy.h"
#include "config/settings.h"
#include "decides_with.h"
#include "error.h"
#include "executor.h"
#include "failover/metrics_text.h"
#include "failover/store_stats.h"
#include "verdict.h"

namespace rl {

// The result of one call: a verdict, or a failure code and message.
struct Outcome {
  Code code = Code::ok;
  std::string message;
  Verdict verdict;

  static Outcome failure(Code code, std::string message) {
    Outcome o;
    o.code = code;
    o.message = std::move(message);
    return o;
  }
};

struct Call {
  Op op = Op::acquire;
  std::string key;
  int64_t cost = 0;
  // This call's deadline in us from its start; 0: the store's timeout. A
  // store that waits for I/O keeps the earlier of the two.
  int64_t timeout_us = 0;
  // Op::release: the store's time of the slice's grant (Op::lease's verdict).
  int64_t granted_at_us = 0;
  // Op::release: the slice's whole size; Op::lease: how long it may be used
  // (gcra and token_bucket hold its units that long: docs/algorithms.md).
  int64_t lease_slice = 0;
  int64_t lease_hold_us = 0;
};

// Completions run exactly once, on a thread of the store, never inside the
// call that started them.
using Completion = std::function<void(Outcome&&)>;
// A batch completes once: on failure `outcomes` is empty and `failure` says
// why; on success it holds one outcome per call, in order.
using BatchCompletion = std::function<void(Outcome&& failure, std::vector<Outcome>&& outcomes)>;

// Which of a store's nodes serves a key: an identity that stays valid for
// the store's life. nullptr: the store's one node (every store but Cluster).
using NodeId = const void*;

// A node that serves keys now, and its address as the statistics name it
// ("host:port"; under Sentinel, the master's name).
struct NodeInfo {
  NodeId id = nullptr;
  std::string address;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Runs one call and waits for it (timeout_us as in Call).
  virtual Outcome run(Op op, std::string_view key, int64_t cost, int64_t timeout_us) = 0;
  virtual void run_async(Call call, Completion done) = 0;
  virtual void run_batch_async(std::vector<Call> calls, BatchCompletion done) = 0;
  // Runs a batch and waits: one outcome per call, in order. Throws rl::Error
  // when the batch as a whole failed (closed store, backend down).
  virtual std::vector<Outcome> run_batch(std::vector<Call> calls) = 0;
  // Any thread: the node a call for `key` goes to now (on Cluster, the
  // master of the key's slot in the slot map as last read), so that the
  // failover layer consults that node's circuit breaker.
  virtual NodeId node_of(std::string_view /*key*/) { return nullptr; }
};

class Store {
 public:
  virtual ~Store() = default;
  // Throws invalid_arg/unsupported when the store cannot serve the policy.
  virtual std::shared_ptr<Backend> backend_for(const Policy& policy) = 0;
  // Completes every pending call with Code::shutdown; later calls fail so.
  virtual void close() = 0;
  virtual Clock& clock() = 0;
  // What the store has done since it opened (rl_store_stats).
  virtual StoreStats* stats() { return nullptr; }
  // The statistics with the breakers' states, for rl_store_get_stats.
  virtual StatsView stats_view() { return StatsView{stats()}; }
  // The nodes that serve keys now: one (id nullptr), or on Cluster each
  // master of the slot map. Empty for memory://.
  virtual std::vector<NodeInfo> nodes() { return {}; }
  // Runs task on a thread of the store after delay_us (acquire_wait's
  // sleeps: a timer, not a blocked thread). close() runs every task still
  // waiting with shutting_down = true before it returns. False (the task is
  // dropped) once the store is closing.
  virtual bool post_after(int64_t delay_us, Executor::Task task) = 0;
  // True on a thread of the store, where a sync call would wait for itself.
  virtual bool on_own_thread() const = 0;
  // "memory", "redis": the URL scheme the store was opened with.
  virtual const char* scheme() const = 0;
  // Redis: what decides there (script_mode, docs/redis-module.md); nothing
  // (script_mode nullptr) for memory://.
  virtual DecidesWith decides_with() const { return {}; }
  // State lives in this process: calls never wait for I/O.
  virtual bool in_process() const = 0;
  // close() has begun: calls fail with Code::shutdown (a layer that answers
  // without a store call checks this).
  virtual bool closed() const = 0;
};

// Opens "memory://" or "redis://..." with settings from the URL's query and
// from `settings`. Throws rl::Error.
std::shared_ptr<Store> open_store(std::string_view url, const Settings& settings);

}  // namespace rl

namespace rl {
struct Url;
// Defined by the Redis store (core/redis/).
std::shared_ptr<Store> open_redis_store(const Url& url, const Settings& settings,
                                        std::unique_ptr<Clock> clock);
}  // namespace rl
