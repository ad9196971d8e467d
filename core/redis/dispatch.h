// Sends script calls to the nodes that serve their keys and gathers one
// result per call. On one node it hands them to the coalescer or the
// script runner as they are. On Cluster it splits them by node and, per
// call, follows what a node answers instead of running it:
// - MOVED: the slot has a new master; the map is updated and the call goes
//   there (and the whole map is read again);
// - ASK: the slot is being imported by another node; the call goes there
//   once, behind ASKING;
// - TRYAGAIN, CLUSTERDOWN, a node known down (the call never left), or a
//   call redirected kMaxRedirects times already (nodes that disagree while
//   a slot moves): the map is read again and the call waits kRetryDelay
//   and goes again, while its deadline allows;
// - a call of a coalesced batch that Redis refused for its key ("non local
//   key": the batch declares its first key only, coalescer.h), or because
//   the node became a replica (READONLY: the map is read again), goes again alone,
//   to be redirected as above (one redirect more); "the cluster is down"
//   in such a call is CLUSTERDOWN.
// Only calls that did not run are sent again, so nothing is counted twice.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "coalescer.h"
#include "module_runner.h"
#include "script_call.h"
#include "topology.h"

namespace boost::asio {
class io_context;
}

namespace rl::redis {

// One call's result: a failure, or its reply, from `node`.
struct CallResult {
  Failure failure;
  Reply reply;
  const Connection* node = nullptr;
};
using ResultsHandler = std::function<void(std::vector<CallResult>&&)>;
using ResultHandler = std::function<void(CallResult&&)>;

class Dispatcher {
 public:
  // `coalescer`: nullptr when single calls are not coalesced.
  // `scripts`: the module where a node has it, else the Lua code.
  Dispatcher(boost::asio::io_context& io, Topology& topology, ModuleRunner& scripts,
             Coalescer* coalescer)
      : io_(io), topology_(topology), scripts_(scripts), coalescer_(coalescer) {}

  // Any thread. `done` runs once, on the I/O thread, with one result per
  // call in order. Throws Code::shutdown when the store is closed; `done`
  // then never runs.
  void submit(std::vector<ScriptCall> calls, Deadline deadline, ResultsHandler done);
  // One call, as submit: on one node (every decision's path) it needs no
  // vector of calls or of results.
  void submit_one(ScriptCall call, Deadline deadline, ResultHandler done);

  // I/O thread, at close: calls waiting to go again fail with Code::shutdown.
  void shut_down();

  // How long a call waits before it goes again after TRYAGAIN, CLUSTERDOWN
  // or a node known down.
  static constexpr std::chrono::milliseconds kRetryDelay{25};
  // Redirects (MOVED, ASK) one call follows at once; after that it waits.
  static constexpr int kMaxRedirects = 5;

 private:
  struct Join;
  struct Attempt {
    size_t index;      // in Join::calls
    Connection* node;  // nullptr: where the slot map says
    bool asking;
    bool alone = false;  // not coalesced: its own FCALL, which Redis redirects
  };
  struct Wait;

  void submit_to_one_node(std::vector<ScriptCall> calls, Deadline deadline, ResultsHandler done);
  // Throws Code::shutdown only when `from_caller` (the caller is then told
  // by the exception, and what was sent is dropped).
  void send(const std::shared_ptr<Join>& join, const std::vector<Attempt>& attempts, int redirects,
            bool from_caller);
  void on_replies(const std::shared_ptr<Join>& join, const std::vector<size_t>& indices,
                  Connection& node, int redirects, Failure&& failure, std::vector<Reply>&& replies);
  void send_later(const std::shared_ptr<Join>& join, std::vector<Attempt> attempts, int redirects);
  static void finish_one(const std::shared_ptr<Join>& join);

  boost::asio::io_context& io_;
  Topology& topology_;
  ModuleRunner& scripts_;
  Coalescer* const coalescer_;

  std::mutex waits_mutex_;
  std::set<std::shared_ptr<Wait>> waits_;
};

}  // namespace rl::redis
