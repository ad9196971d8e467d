// Runs the Lua code of lua/ on one node, as Redis Functions (FCALL, Redis 7)
// or as scripts (EVALSHA). Either way, an answer saying the code is not
// there means the call did not run, so that call alone is sent again after
// the code is loaded: transparent to the caller, never counted twice.
// - Functions: "Function not found" (a new server, FUNCTION FLUSH): FUNCTION
//   LOAD, then the call again, in one write. A server without FCALL (Redis
//   6) or a user not allowed FCALL or FUNCTION LOAD: the runner falls back
//   to scripts for good.
// - Scripts: NOSCRIPT (cache flushed, restart): the call again as EVAL,
//   which also loads it.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "connection.h"
#include "replica_wait.h"
#include "scripts.h"

namespace rl::redis {

// One decision: its algorithm and operation name the Lua function (or
// script) and the module command it goes as.
struct ScriptCall {
  Algorithm algorithm;
  Op op;
  std::vector<std::string> keys;
  std::vector<std::string> args;
  bool writes = true;  // false: a peek, which no WAIT of min_replicas follows
};

enum class ScriptMode { functions, scripts };

// The usual call: Redis's clock ('') and cost 1. It goes in lua/common.lua's
// short form, its limits alone, alone or in a batch (each argument costs
// Redis work on every call).
bool usual_call(const ScriptCall& call);

// FCALL or FUNCTION LOAD cannot be used here at all: not a command of this
// server (Redis 6), or not one this ACL user may run.
bool functions_refused(const Reply& r);
// An FCALL that did not run: its function is not loaded, or refused above.
bool function_not_run(const Reply& r);

class ScriptRunner {
 public:
  ScriptRunner(ScriptMode mode, ReplicaWait replica_wait)
      : configured_(mode), mode_(mode), replica_wait_(replica_wait) {}

  // All calls leave in one write; `done` gets one reply per call, in order.
  // With min_replicas a WAIT follows the calls when one of them writes; if
  // it falls short of the replicas, `done` gets its failure instead.
  // `asking`: each behind an ASKING (Cluster, after an ASK reply).
  void run(Connection& node, std::vector<ScriptCall> calls, Deadline deadline, ReplyHandler done,
           bool asking = false);

  // What the next call is sent as.
  ScriptMode mode() const { return mode_.load(std::memory_order_relaxed); }
  // What the store was opened with (script_mode).
  ScriptMode configured() const { return configured_; }
  const ReplicaWait& replica_wait() const { return replica_wait_; }

 private:
  const ScriptMode configured_;
  std::atomic<ScriptMode> mode_;
  const ReplicaWait replica_wait_;
};

}  // namespace rl::redis
