// The setup of one connection attempt, from the node's address to a
// connection ready for requests: TCP connect (with the kernel's bounds on a
// dead peer), the TLS handshake on rediss://, then AUTH and SELECT from the
// URL and PING (and ROLE, for a node that can move), within
// connect_timeout. It is apart from the connection so that the connection
// knows only "connected" or "failed, and why"; each failure's words name
// the setting to look at, and never carry a credential.
#pragma once

#include <array>
#include <boost/asio.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "connection.h"
#include "reply_reader.h"
#include "resolver.h"
#include "stream.h"
#include "stream_fault.h"

namespace rl::redis {

// AUTH with a password alone, or with an ACL user's: to Redis and to Sentinel.
std::string auth_command(const std::string& user, const std::string& password);

// The liveness watchdog's words for a peer that stopped answering.
std::string presumed_dead(std::chrono::milliseconds liveness_timeout);

class Handshake {
 public:
  // The failure's message does not name the node: the connection puts its
  // own name in front.
  using Done = std::function<void(Failure&&)>;

  Handshake(boost::asio::io_context& io, Stream& stream, const NodeOptions& options);

  // I/O thread: a fresh stream, connected to `address`. With `check_role`,
  // a node that is not a master (a replica a moment after a failover) fails.
  // `done` runs once, on the I/O thread, unless cancel() comes first.
  void start(const Address& address, bool check_role, Done done);
  // Stops the attempt: `done` never runs. Closing the stream is the caller's.
  void cancel();

 private:
  enum class Phase { connecting, tls, redis };
  using error_code = boost::system::error_code;

  void arm(Deadline at, bool liveness);
  void await_replies();
  void timed_out();
  void tls_handshake(uint64_t gen);
  void redis_handshake(uint64_t gen);
  void read(uint64_t gen);
  void judge();
  void finish(Code code, std::string why);
  void finish(Failure&& outcome);
  Failure io_failure(const char* what, const error_code& ec) const;
  Failure tls_failure(StreamFault fault, const error_code& ec) const;

  Stream& stream_;
  const NodeOptions& options_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer timer_;
  Done done_;
  uint64_t generation_ = 0;  // of the current attempt: handlers of an old one stop
  Phase phase_ = Phase::connecting;
  std::string server_name_;  // SNI and the name verified
  Deadline connect_deadline_;
  bool liveness_bound_ = false;  // the timer is the liveness bound, not connect_timeout's
  // The Redis part: the commands, what each is called in a failure, and
  // the replies read so far.
  std::string request_;
  std::vector<std::string> steps_;
  bool check_role_ = false;
  ReplyReader reader_;
  std::vector<Reply> replies_;
  std::array<char, 4096> buffer_;
};

}  // namespace rl::redis
