// Coalescing: single calls for one node that arrive while an earlier one
// from this store awaits its reply wait, then leave together as ONE FCALL
// of the library's batch function, which decides them in order
// (lua/library.lua). Redis pays one command's overhead for all of them, and
// each still gets its own reply or error, decided exactly as if sent alone
// (tests/redis/coalescing_test.cpp). A call whose deadline is earlier than
// that of some call in flight does not wait. Only with Functions or rl's Redis module
// (script_mode; the module's batch is one RL.MANY, one limiter's calls with
// its name, clock and limits sent once, or RL.BATCH for calls of several
// limiters); with scripts every call
// leaves as it comes. On Cluster a command's declared keys must share a
// slot: the Lua calls of every slot of a node are one lane (kWholeNode),
// whose batch declares its first key only (node_batch.lua), so a node's calls leave
// together however many nodes there are; RL.MANY and RL.BATCH declare their keys, so
// with the module each slot of a node is a lane.
//
// A lane has at most two requests in flight, pipelined on its connection:
// what waits leaves at once when nothing is in flight, and as a second
// request once about half of the lane's last cycle waits (the calls of the
// request in flight and of the one answered before it); fewer wait for a
// reply. So Redis has the next batch when it ends one instead of idling
// while this client reads the reply and writes the next, and the callers of
// a cycle split into two batches of about equal size, not one and the rest.
// One thread at a time sends a lane's waiting calls (whoever finds them due:
// a caller, or the I/O thread on a reply), so batches leave, and Redis runs
// them, in the order their calls came. No second request while the node's
// first call on its connection asks it for rl's module: that call may go
// again as Lua once answered, and the second must not overtake it. A batch
// that did not run (the library went missing) goes again as single calls,
// behind the other request in flight: should the library be loaded again
// between the two, the later request's calls are decided first (calls that
// were in flight at once).
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
  // Throws Code::shutdown like Connection::send for a call it sends alone;
  // the calls of a batch it sends then get the failure in their `done`.
  // `slot`: the call's Cluster slot (a module node's lane), kWholeNode
  // for a Cluster node's Lua lane, 0 on a single node.
  void run(Connection& node, uint32_t slot, ScriptCall call, Deadline deadline, ReplyHandler done);

  // At most this many requests of one lane in flight.
  static constexpr size_t kMaxInFlight = 2;
  // A second request leaves only with at least this many calls: a pair of
  // tiny batches costs Redis more commands per decision than it hides.
  static constexpr size_t kMinSecond = 4;
  // The lane of a Cluster node's Lua calls, whatever their slots.
  static constexpr uint32_t kWholeNode = UINT32_MAX;

 private:
  // `done` is shared so that it is still here to be told when a send throws.
  struct Waiting {
    ScriptCall call;
    Deadline deadline;
    std::shared_ptr<ReplyHandler> done;
  };
  using Batch = std::shared_ptr<std::vector<Waiting>>;
  // A request of the lane awaiting its reply (a batch sent again as single
  // calls stays the same request).
  struct InFlight {
    uint64_t id;
    size_t calls;
    Deadline latest;  // its calls' latest deadline
  };
  // One node's (slot's) calls: what is in flight, what waits behind it.
  struct Lane {
    std::vector<InFlight> in_flight;
    std::vector<Waiting> waiting;
    size_t last_answered = 0;  // calls of the request answered last
    bool sending = false;      // a thread is sending waiting calls (drain)
    uint64_t next_id = 0;
  };

  using LaneKey = std::pair<Connection*, uint32_t>;  // node, slot

  // Under mutex_: whether the waiting calls should leave now, and taking
  // them as a request in flight (its id).
  bool due(LaneKey key, const Lane& lane) const;
  static uint64_t take(Lane& lane, std::vector<Waiting>& batch);
  // Sends `batch` (request `id`), then whatever else is due, until nothing
  // is; the calling thread holds the lane's `sending` until it returns.
  void drain(LaneKey lane, Batch batch, uint64_t id);
  // Each throws what Connection::send throws, before any `done` ran.
  void send_alone(LaneKey lane, uint64_t id, Waiting& w);
  void send_batch(LaneKey lane, uint64_t id, const Batch& batch);
  // The calls of a batch that did not run, again as single calls.
  void send_each(LaneKey lane, uint64_t id, std::vector<Waiting>& batch);
  // Request `id` of the lane was answered (or failed): sends what is due.
  void answered(LaneKey lane, uint64_t id);

  ModuleRunner& runner_;
  std::mutex mutex_;
  std::map<LaneKey, Lane> lanes_;
};

}  // namespace rl::redis
