// Where a connection's node is: a fixed host:port, or the master that
// Sentinel names now. A connection asks before every connection attempt,
// so a failover is followed by reconnecting.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "connection.h"

namespace boost::asio {
class io_context;
}

namespace rl::redis {

struct Address {
  std::string host;
  int port = 0;
};

class AddressResolver {
 public:
  using Done = std::function<void(Failure&&, Address&&)>;
  virtual ~AddressResolver() = default;
  // I/O thread. `done` runs once, on the I/O thread, unless cancel() is
  // called first (then it never runs).
  virtual void resolve(Done done) = 0;
  // Stops a resolution, and the watch for a moved node.
  virtual void cancel() = 0;
  // Sentinel: after a resolution, `moved` runs (I/O thread, once) when the
  // sentinel announces that the master moved (+switch-master), with the
  // announcement ("<old ip> <old port> <new ip> <new port>").
  virtual void on_moved(std::function<void(std::string)> moved) = 0;
  // Whether the node can move (Sentinel): a READONLY reply then means the
  // connection is on a demoted master, and it reconnects.
  virtual bool follows_failover() const = 0;
};

// NodeOptions::sentinels empty: host:port as given; else Sentinel.
std::unique_ptr<AddressResolver> make_resolver(boost::asio::io_context& io,
                                               const NodeOptions& options);

}  // namespace rl::redis
