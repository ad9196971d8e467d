// Coalescing: single calls for one node that arrive while an earlier one
// from this store awaits its reply wait for that reply, then leave together
// as ONE FCALL of the library's batch function, which decides them in order
// (lua/library.lua). Redis pays one command's overhead for all of them, and
// each still gets its own reply or error, decided exactly as if sent alone
// (tests/redis/coalescing_test.cpp). A call whose deadline is earlier than
// the one in flight does not wait. Only with Functions (script_mode); with
// scripts every call leaves as it comes.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "script_call.h"

namespace rl::redis {

class Coalescer {
 public:
  explicit Coalescer(ScriptRunner& runner) : runner_(runner) {}

  // Any thread; `done` gets one reply (or a failure), on the I/O thread.
  // Throws Code::shutdown like Connection::send for a call it sends itself.
  void run(Connection& node, ScriptCall call, Deadline deadline, ReplyHandler done);

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

  // Each throws what Connection::send throws, before any `done` ran.
  void send_alone(Connection& node, Waiting& w);
  void send_batch(Connection& node, const std::shared_ptr<std::vector<Waiting>>& batch);
  // The calls of a batch that did not run, again as single calls.
  void send_each(Connection& node, std::vector<Waiting>& batch);
  // After a reply: sends what waited, or marks the lane idle.
  void next(Connection& node);

  ScriptRunner& runner_;
  std::mutex mutex_;
  std::unordered_map<Connection*, Lane> lanes_;
};

}  // namespace rl::redis
