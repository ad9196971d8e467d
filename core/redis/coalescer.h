// Coalescing: single calls for one node that arrive while an earlier one
// from this store awaits its reply wait for that reply, then leave together
// as ONE FCALL of the library's batch function, which decides them in order
// (lua/library.lua). Redis pays one command's overhead for all of them, and
// each still gets its own reply or error, decided exactly as if sent alone
// (tests/redis/coalescing_test.cpp). A call whose deadline is earlier than
// the one in flight does not wait. Only with Functions or rl's Redis module
// (script_mode; the module's batch is one RL.BATCH); with scripts every call
// leaves as it comes. On Cluster a batch must keep to one slot (its keys are
// declared), so each slot of a node is a lane.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "module_runner.h"
#include "script_call.h"

namespace rl::redis {

class Coalescer {
 public:
  explicit Coalescer(ModuleRunner& runner) : runner_(runner) {}

  // Any thread; `done` gets one reply (or a failure), on the I/O thread.
  // Throws Code::shutdown like Connection::send for a call it sends itself.
  // `slot`: the call's Cluster slot, 0 on a single node.
  void run(Connection& node, uint32_t slot, ScriptCall call, Deadline deadline, ReplyHandler done);

 private:
  // `done` is shared so that it is still here to be told when a send throws.
  struct Waiting {
    ScriptCall call;
    Deadline deadline;
    std::shared_ptr<ReplyHandler> done;
  };
  // One node's calls: whether something is in flight, what waits behind it.
  struct Lane {
    bool busy = false;
    Deadline in_flight_deadline;
    std::vector<Waiting> waiting;
  };

  using LaneKey = std::pair<Connection*, uint32_t>;  // node, slot

  // Each throws what Connection::send throws, before any `done` ran.
  void send_alone(LaneKey lane, Waiting& w);
  void send_batch(LaneKey lane, const std::shared_ptr<std::vector<Waiting>>& batch);
  // The calls of a batch that did not run, again as single calls.
  void send_each(LaneKey lane, std::vector<Waiting>& batch);
  // After a reply: sends what waited, or marks the lane idle.
  void next(LaneKey lane);

  ModuleRunner& runner_;
  std::mutex mutex_;
  std::map<LaneKey, Lane> lanes_;
};

}  // namespace rl::redis
