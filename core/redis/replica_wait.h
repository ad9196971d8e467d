// min_replicas: a request whose calls write ends with WAIT <replicas>
// <timeout>, in the same write on the same connection, so the node that took
// the writes says how many replicas have them before the calls are answered.
// WAIT acknowledges every write its connection made before it, so one WAIT at
// the end of a request covers all of its calls: a batch, a coalesced FCALL
// of many calls, several FCALLs in one write. Fewer replicas than asked is an
// outage (RL_E_BACKEND_UNAVAILABLE), never a silent success: the write ran
// and counted on the master, but a failover may forget it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "connection.h"

namespace rl::redis {

struct ReplicaWait {
  int64_t replicas = 0;                  // 0: off
  std::chrono::milliseconds timeout{0};  // 0: the request's time left
  bool on() const { return replicas > 0; }
};

// Appends the WAIT to `request` (one more command and reply), with the
// timeout `wait` names, at most the time left before `request.deadline` and
// at least 1 ms (WAIT's 0 would wait forever). Returns that timeout in ms.
int64_t append_wait(Request& request, const ReplicaWait& wait);

// What the WAIT's reply means for the calls before it that wrote: none when
// enough replicas acknowledged them; else an outage saying how many did
// (a refused WAIT, such as an ACL user without +wait, is RL_E_AUTH).
Failure wait_failure(const Reply& reply, const ReplicaWait& wait, int64_t timeout_ms,
                     const std::string& node);

}  // namespace rl::redis
