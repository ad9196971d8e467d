#include "handshake.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "error_reply.h"
#include "quote.h"
#include "resp.h"

namespace rl::redis {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// The kernel's own bound on a dead peer: data written but not acknowledged
// for liveness_timeout (TCP_USER_TIMEOUT), or an idle connection whose
// keepalive probes go unanswered, fails the socket. A peer that
// acknowledges but never answers is the liveness watchdog's.
void set_socket_options(tcp::socket& socket, std::chrono::milliseconds liveness_timeout) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  socket.set_option(asio::socket_base::keep_alive(true), ignored);
#if defined(TCP_KEEPIDLE) && defined(TCP_USER_TIMEOUT)
  const int fd = socket.native_handle();
  const auto ms = liveness_timeout.count();
  const int idle = static_cast<int>(std::max<int64_t>(1, ms / 1000));
  const int interval = std::max(1, idle / 3);
  const int probes = 3;
  const auto user_timeout = static_cast<unsigned>(ms);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
#else
  (void)liveness_timeout;
#endif
}

bool is_master(const Reply& role) {
  return role.type == Reply::Type::array && !role.elements.empty() &&
         role.elements[0].text == "master";
}

}  // namespace

std::string auth_command(const std::string& user, const std::string& password) {
  return user.empty() ? format_command({"AUTH", password})
                      : format_command({"AUTH", user, password});
}

std::string presumed_dead(std::chrono::milliseconds liveness_timeout) {
  const std::string ms = std::to_string(liveness_timeout.count());
  return "no reply for " + ms +
         " ms with requests waiting: connection presumed dead (liveness_timeout_ms=" + ms + ")";
}

Handshake::Handshake(asio::io_context& io, Stream& stream, const NodeOptions& options)
    : stream_(stream), options_(options), resolver_(io), timer_(io) {}

void Handshake::cancel() {
  ++generation_;
  resolver_.cancel();
  timer_.cancel();
  done_ = nullptr;
}

void Handshake::start(const Address& address, bool check_role, Done done) {
  cancel();
  done_ = std::move(done);
  check_role_ = check_role;
  phase_ = Phase::connecting;
  // TLS: SNI and verification against tls_server_name, else the host the
  // address names.
  server_name_ = options_.tls.server_name.empty() ? address.host : options_.tls.server_name;
  stream_.reset();
  connect_deadline_ = std::chrono::steady_clock::now() + options_.connect_timeout;
  arm(connect_deadline_, false);
  const uint64_t gen = generation_;
  resolver_.async_resolve(
      address.host, std::to_string(address.port),
      [this, gen](error_code ec, const tcp::resolver::results_type& results) {
        if (gen != generation_) return;
        if (ec) return finish(Code::backend_unavailable, "cannot resolve: " + ec.message());
        asio::async_connect(
            stream_.socket(), results, [this, gen](error_code ec2, const tcp::endpoint&) {
              if (gen != generation_) return;
              if (ec2) return finish(Code::backend_unavailable, "connect failed: " + ec2.message());
              set_socket_options(stream_.socket(), options_.liveness_timeout);
              tls_handshake(gen);
            });
      });
}

// The connect timeout, or (while the Redis part awaits replies) the
// liveness bound when it comes first: as for any request awaiting replies.
void Handshake::arm(Deadline at, bool liveness) {
  liveness_bound_ = liveness;
  timer_.expires_at(at);
  timer_.async_wait([this, gen = generation_](error_code ec) {
    if (ec || gen != generation_) return;
    timed_out();
  });
}

void Handshake::await_replies() {
  const Deadline silent = std::chrono::steady_clock::now() + options_.liveness_timeout;
  arm(std::min(connect_deadline_, silent), silent < connect_deadline_);
}

void Handshake::timed_out() {
  if (liveness_bound_)
    return finish(Code::backend_unavailable, presumed_dead(options_.liveness_timeout));
  // A plain server takes a TLS hello for a command that never ends.
  const bool tls_unanswered = phase_ == Phase::tls && stream_.is_tls();
  finish(Code::backend_unavailable,
         "connect timed out after " + std::to_string(options_.connect_timeout.count()) + " ms" +
             (tls_unanswered ? " in the TLS handshake (a plain port? use redis://)" : ""));
}

void Handshake::tls_handshake(uint64_t gen) {
  phase_ = Phase::tls;
  stream_.async_handshake(server_name_, options_.tls.verify, [this, gen](error_code ec) {
    if (gen != generation_) return;
    if (ec) return finish(io_failure("TLS handshake failed", ec));
    redis_handshake(gen);
  });
}

// AUTH and SELECT from the URL, then PING: a server that wants a password
// we did not give answers NOAUTH here, not on the first decision. With
// Sentinel, ROLE too: a node the sentinels named a moment ago may be a
// replica by now.
void Handshake::redis_handshake(uint64_t gen) {
  phase_ = Phase::redis;
  request_.clear();
  steps_.clear();
  replies_.clear();
  reader_.reset();
  if (!options_.password.empty()) {
    request_ += auth_command(options_.user, options_.password);
    steps_.push_back("authentication");
  }
  if (options_.db != 0) {
    request_ += format_command({"SELECT", std::to_string(options_.db)});
    steps_.push_back("SELECT " + std::to_string(options_.db));
  }
  request_ += format_command({"PING"});
  steps_.push_back("PING");
  if (check_role_) {
    request_ += format_command({"ROLE"});
    steps_.push_back("ROLE");
  }
  await_replies();
  read(gen);
  stream_.async_write(asio::buffer(request_), [this, gen](error_code ec, size_t) {
    if (gen != generation_ || !ec) return;
    finish(io_failure("write failed", ec));
  });
}

void Handshake::read(uint64_t gen) {
  stream_.async_read_some(asio::buffer(buffer_), [this, gen](error_code ec, size_t n) {
    if (gen != generation_) return;
    if (ec) return finish(io_failure("read failed", ec));
    // The peer is alive: the liveness bound starts again.
    if (liveness_bound_) await_replies();
    if (!reader_.feed(std::string_view(buffer_.data(), n)))
      return finish(Code::backend_unavailable, reader_.error());
    while (replies_.size() < steps_.size()) {
      std::optional<Reply> reply = reader_.next();
      if (reader_.failed()) return finish(Code::backend_unavailable, reader_.error());
      if (!reply) return read(gen);
      replies_.push_back(std::move(*reply));
    }
    judge();
  });
}

void Handshake::judge() {
  if (!reader_.drained())
    return finish(Code::backend_unavailable, "protocol error: a reply nobody asked for");
  for (size_t i = 0; i < replies_.size(); ++i) {
    if (!replies_[i].is_error()) continue;
    // LOADING or BUSY is unavailable: the server is there but not ready,
    // and the handshake is tried again after the backoff.
    const Code code = code_of_error_reply(replies_[i].text);
    return finish(code, (code == Code::auth ? "authentication failed: " : steps_[i] + " failed: ") +
                            quote(replies_[i].text, 200));
  }
  if (check_role_ && !is_master(replies_.back()))
    return finish(Code::backend_unavailable, "is not a master (yet): asking the sentinels again");
  finish(Code::ok, {});
}

void Handshake::finish(Code code, std::string why) {
  finish(Failure{code, std::move(why)});
}

// Runs `done` once; ok (Code::ok) when the connection is ready.
void Handshake::finish(Failure&& outcome) {
  ++generation_;
  timer_.cancel();
  resolver_.cancel();
  Done done = std::move(done_);
  done_ = nullptr;
  if (done) done(std::move(outcome));
}

// What a failed read, write or TLS handshake says. Over TLS, a failure that
// is the configuration's (a CA that does not sign the server, a name that
// does not match, a client certificate the server refuses) is an auth
// failure: retrying will not help.
Failure Handshake::io_failure(const char* what, const error_code& ec) const {
  const StreamFault fault = classify_stream_error(ec);
  if (is_tls_fault(fault)) return tls_failure(fault, ec);
  std::string why = fault == StreamFault::closed ? "connection closed by the server"
                                                 : std::string(what) + ": " + ec.message();
  if (phase_ == Phase::redis) {
    // Plaintext to a TLS port ends so: the server drops what is not TLS.
    // TLS 1.3 checks the client's certificate after the client finished its
    // part: a server that wants one may just close, its alert unread.
    why += stream_.is_tls() ? " after the TLS handshake (does it want a client certificate? "
                              "tls_cert_file, tls_key_file)"
                            : " during the handshake (a TLS port? use rediss://)";
  }
  return {Code::backend_unavailable, why};
}

Failure Handshake::tls_failure(StreamFault fault, const error_code& ec) const {
  switch (fault) {
    case StreamFault::server_not_verified: {
      std::string why = stream_.verify_failure();
      if (why.empty()) why = ec.message();
      return {Code::auth, "TLS: the server's certificate failed verification: " + why +
                              " (tls_ca_file, tls_ca_dir, tls_server_name)"};
    }
    case StreamFault::client_cert_refused:
      return {Code::auth, "TLS: the server refused the client certificate: " + ec.message() +
                              " (tls_cert_file, tls_key_file)"};
    case StreamFault::not_tls:
      return {Code::auth, "TLS: the server does not speak TLS on this port (" + ec.message() +
                              "; use redis:// for a plain port)"};
    default: return {Code::auth, "TLS handshake failed: " + ec.message()};
  }
}

}  // namespace rl::redis
