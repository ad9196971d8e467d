// Runs script calls on one node as rl's Redis module commands (RL.ACQUIRE,
// RL.PEEK, RL.REFUND, RL.RESET; RL.MANY or RL.BATCH for a coalesced batch) when the
// node has the module, or hands them to the ScriptRunner (Lua) otherwise.
// The module takes the very keys and arguments of the Lua code and answers
// alike (redis-module/), so a call is the same call either way.
// Detection needs no extra command: under script_mode=auto the first call to
// a node goes as RL.*; "unknown command" (no module) or NOPERM (a user not
// allowed it) means it did not run, so that call goes again as Lua and the
// node is remembered as one without the module for as long as its
// connection lasts: the first call after the node's connection is made again
// (a lost connection, a failover) asks again, so a MODULE LOAD on a running
// server is picked up then. Under script_mode=module such a reply is the
// call's error.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "decides_with.h"
#include "module_use.h"
#include "script_call.h"

namespace rl::redis {

struct ModuleRun;

class ModuleRunner {
 public:
  ModuleRunner(ModuleUse use, ScriptRunner& scripts) : use_(use), scripts_(scripts) {}

  // As ScriptRunner::run.
  void run(Connection& node, std::vector<ScriptCall> calls, Deadline deadline, ReplyHandler done,
           bool asking = false);

  // Whether calls to `node` go as module commands (as far as known now;
  // under auto an unknown node is tried).
  bool uses_module(const Connection& node) const;
  // Whether `node` is known to run them (auto: a call there found the module).
  bool has_module(const Connection& node) const;
  // Whether single calls to `node` are worth coalescing: one batch command
  // exists for them (RL.BATCH, or the Functions library's batch).
  bool coalesces(const Connection& node) const;
  // The command of calls coalesced on one node: RL.MANY name now limits
  // key cost ... when they are one operation of one limiter at one clock
  // (one_limiter of the first and each other: the usual batch), their name,
  // clock and limits sent once; else RL.BATCH key name now cost limits ...
  static bool one_limiter(const ScriptCall& first, const ScriptCall& call);
  static void start_many(std::vector<std::string_view>& argv, const ScriptCall& first);
  static void append_many(std::vector<std::string_view>& argv, const ScriptCall& call);
  static void append_batch(std::vector<std::string_view>& argv, const ScriptCall& call);
  // Whether batches to `node` may go as RL.MANY: not once the node refused
  // one (a module older than RL.MANY, or a user not allowed it), for as
  // long as that connection lasts; RL.BATCH then.
  bool takes_many(const Connection& node) const;
  void refused_many(const Connection& node);

  // The script_mode setting, what the Lua code goes as, and (auto) how
  // many nodes were seen with the module and without.
  DecidesWith decides_with() const;
  ModuleUse use() const { return use_; }
  const ReplicaWait& replica_wait() const { return scripts_.replica_wait(); }

  // A reply meaning the module command did not run: no module, or refused.
  static bool module_refused(const Reply& r);

 private:
  // What a call to a node found, on which of its connections
  // (Connection::connections()).
  struct Learned {
    bool has_module = false;
    uint64_t connection = 0;
  };
  // Whether calls to `node` go as Lua for now: a call on its current
  // connection found no module (auto).
  static bool lacks_module(const Connection& node, const Learned& learned);
  bool known(const Connection& node) const;
  void learned(const Connection& node, bool has_module);
  // min_replicas after a first call that found the module: its own WAIT.
  void wait_after(const std::shared_ptr<ModuleRun>& run, std::vector<Reply>&& out);

  const ModuleUse use_;
  ScriptRunner& scripts_;
  mutable std::mutex mutex_;
  std::unordered_map<const Connection*, Learned> learned_;  // per node (auto)
  // The connection (Connection::connections()) on which a node refused RL.MANY.
  std::unordered_map<const Connection*, uint64_t> many_refused_;
};

}  // namespace rl::redis
