// One multiplexed connection to one Redis node, shared by every limiter of a
// store. Requests that arrive while a write is in flight leave together in
// the next write (automatic pipelining); one that finds the connection idle
// is written by its caller's thread, and a sync caller's (SyncCall) also has
// its reply read there; replies are matched in order. It
// connects (TCP, TLS, AUTH, SELECT, PING) within connect_timeout, reconnects with
// capped, jittered backoff, and completes every request by its deadline. A
// connection that reads nothing for liveness_timeout while replies are
// awaited is presumed dead (a half-open peer): it is dropped, what was
// pending on it fails, and it reconnects.
// Its parts: the request pipeline without I/O (pipeline.h), the byte stream,
// TCP or TLS (stream.h) and why it failed (stream_fault.h), the setup of
// each connection attempt (handshake.h), the node's address, fixed or
// Sentinel's (resolver.h), and callers' own writes and sync callers' own
// reads, with who may use the socket when (direct_path.h). Asio, OpenSSL
// and hiredis stay inside core/redis's sources.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "reply.h"

namespace boost::asio {
class io_context;
}

namespace rl::redis {

using Deadline = std::chrono::steady_clock::time_point;

// rediss://: TLS with the server's certificate chain and name verified.
struct TlsOptions {
  bool enabled = false;
  std::string ca_file;      // PEM CA certificates; none of the two: the system's
  std::string ca_dir;       // a directory of hashed CA certificates (c_rehash)
  std::string cert_file;    // client certificate chain, for mutual TLS
  std::string key_file;     // its private key
  std::string server_name;  // SNI and the name verified; empty: the URL's host
  bool verify = true;       // false: tls_insecure_skip_verify (no chain or name check)
};

// redis+sentinel://: the master is wherever the sentinels say it is now.
struct SentinelOptions {
  struct Sentinel {
    std::string host;
    int port = 26379;
  };
  std::vector<Sentinel> sentinels;  // empty: NodeOptions::host and port, fixed
  std::string master_name;
  std::string user;      // the sentinels' own ACL user and password (not the master's)
  std::string password;  // empty: no AUTH to the sentinels
};

struct NodeOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;      // ACL user; empty: AUTH with the password alone
  std::string password;  // empty: no AUTH
  int db = 0;
  std::chrono::milliseconds connect_timeout{1000};  // resolve + connect + handshake
  std::chrono::milliseconds reconnect_max{500};     // backoff cap
  // No byte read for this long while replies are awaited: the connection is
  // dropped. Also the socket's TCP_USER_TIMEOUT and keepalive bound.
  std::chrono::milliseconds liveness_timeout{2000};
  TlsOptions tls;
  SentinelOptions sentinel;
};

// Why a request got no replies, with a message that names the node.
struct Failure {
  Code code = Code::ok;
  std::string message;
  // The request never left: none of it ran (Cluster sends such calls again
  // once the slot map says where their node went).
  bool unsent = false;
  explicit operator bool() const { return code != Code::ok; }
};

// Runs exactly once: with a failure, or with one reply per command, in
// order. On the I/O thread, or on a synchronous caller's own thread when
// that caller read its reply itself (see SyncCall).
using ReplyHandler = std::function<void(Failure&&, std::vector<Reply>&&)>;

struct Request {
  std::string commands;  // `count` RESP commands (resp.h)
  size_t count = 1;
  Deadline deadline;
  ReplyHandler done;
};

// Requests held by every connection of the process: waiting to be written,
// or written and waiting for replies (one that timed out keeps its place
// until its replies arrive or its connection is dropped). Tests check that a
// dead connection does not make it grow without bound.
size_t requests_held();

// While one lives on a thread, the next send() from that thread is the
// request of a caller that blocks until it is answered (a sync call). On a
// connection with nothing in flight such a caller writes its request and
// reads its reply itself, with its deadline, and runs the request's handler
// on its own thread: the I/O thread is not involved. Otherwise the request
// goes the usual way.
class SyncCall {
 public:
  SyncCall();
  ~SyncCall();
  SyncCall(const SyncCall&) = delete;
  SyncCall& operator=(const SyncCall&) = delete;
};

// The next send() from this thread goes the usual way: a sync call that
// sends to several nodes must not wait for one node's reply before it
// sends to the next.
void forgo_sync_call();

// Requests answered so far on their caller's thread (SyncCall), process-wide:
// tests check that a lone sync caller does not go through the I/O thread.
uint64_t sync_calls_answered_inline();

class Connection {
 public:
  virtual ~Connection() = default;
  // Starts connecting at once. The connection must be destroyed after `io`
  // stopped running, and before `io` itself. Throws invalid_arg for TLS
  // files that do not load.
  static std::unique_ptr<Connection> create(boost::asio::io_context& io, NodeOptions options);

  // Any thread; on an idle connection it writes to the socket itself (a
  // SyncCall also reads its reply and runs `done`; otherwise the reply is
  // read, and `done` run, on the I/O thread). Throws
  // Code::shutdown once refuse_new() was called. While
  // the node is known down (between reconnect attempts), the request fails
  // at once with the last cause; requests that were written when the
  // connection broke fail too and are never resent (they may have run).
  virtual void send(Request request) = 0;
  // Any thread: waits until the first connection attempt succeeded or
  // failed (at most `timeout`); ok when it is still going.
  virtual Failure wait_first_attempt(std::chrono::milliseconds timeout) = 0;
  // Any thread: later send() calls throw Code::shutdown.
  virtual void refuse_new() = 0;
  // I/O thread (or once it stopped): completes every request still held
  // with Code::shutdown and closes the socket. Idempotent.
  virtual void shut_down() = 0;
  // "redis 127.0.0.1:6379" (with Sentinel: "redis master 'name' via
  // sentinel"): the start of every failure message.
  virtual const std::string& name() const = 0;
  // Any thread: how many connections to the node were made so far (each
  // handshake done). A new one after a lost connection or a failover counts:
  // what was learned about the server on the last one may have changed.
  virtual uint64_t connections() const = 0;
};

}  // namespace rl::redis
