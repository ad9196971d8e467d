#include "replica_wait.h"

#include <algorithm>

#include "error_reply.h"
#include "quote.h"
#include "resp.h"

namespace rl::redis {

int64_t append_wait(Request& request, const ReplicaWait& wait) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  int64_t timeout_ms = wait.timeout.count();
  if (request.deadline != Deadline::max()) {
    const auto left =
        duration_cast<milliseconds>(request.deadline - std::chrono::steady_clock::now());
    timeout_ms = timeout_ms > 0 ? std::min(timeout_ms, left.count()) : left.count();
  }
  timeout_ms = std::max<int64_t>(timeout_ms, 1);
  const std::string replicas = std::to_string(wait.replicas);
  const std::string timeout = std::to_string(timeout_ms);
  request.commands += format_command({"WAIT", replicas, timeout});
  ++request.count;
  return timeout_ms;
}

Failure wait_failure(const Reply& reply, const ReplicaWait& wait, int64_t timeout_ms,
                     const std::string& node) {
  const std::string setting = "min_replicas=" + std::to_string(wait.replicas);
  if (reply.is_error()) {
    const Code code =
        code_of_error_reply(reply.text) == Code::auth ? Code::auth : Code::backend_unavailable;
    return Failure{
        code, node + ": " + setting + ": WAIT failed after the write: " + quote(reply.text, 200)};
  }
  if (reply.type != Reply::Type::integer) {
    return Failure{Code::backend_error, node + ": " + setting + ": unexpected reply to WAIT"};
  }
  if (reply.integer >= wait.replicas) return {};
  return Failure{Code::backend_unavailable,
                 node + ": " + setting + ": " + std::to_string(reply.integer) +
                     " replicas acknowledged the write within " + std::to_string(timeout_ms) +
                     " ms (it counted on the master only)"};
}

}  // namespace rl::redis
