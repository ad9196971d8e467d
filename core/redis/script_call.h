// Runs scripts by SHA1 (EVALSHA). A NOSCRIPT answer means the script did not
// run (the cache was flushed, or the server restarted), so that call alone is
// sent again as EVAL, which also loads it: transparent to the caller, and a
// request is never counted twice.
#pragma once

#include <string>
#include <vector>

#include "connection.h"
#include "scripts.h"

namespace rl::redis {

struct ScriptCall {
  const Script* script;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

// All calls leave in one write; `done` gets one reply per call, in order.
void run_scripts(Connection& node, std::vector<ScriptCall> calls, Deadline deadline,
                 ReplyHandler done);

}  // namespace rl::redis
