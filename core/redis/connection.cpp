#include "connection.h"

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

#include "handshake.h"
#include "pipeline.h"
#include "quote.h"
#include "reply_reader.h"
#include "resolver.h"
#include "stream.h"
#include "stream_fault.h"

namespace rl::redis {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using SteadyClock = std::chrono::steady_clock;

// A request its caller wrote to the socket itself (see send): it joins the
// requests in flight when the I/O thread next looks. `rest` is what the
// socket did not take; the I/O thread writes it before anything else.
struct Direct {
  Request request;
  std::string rest;
  SteadyClock::time_point written_at;
};

// What a sync caller that owned the socket gives back to the I/O thread
// when it cannot finish alone (its deadline passed, the socket failed or
// took only part of the request, a reply the I/O thread must see): its
// request, and the bytes it read, which the I/O thread reads again.
struct Handback {
  Request request;
  bool written = false;  // false: it waits for a write like any other
  std::string rest;      // what the socket did not take
  std::string read;
  SteadyClock::time_point written_at;
};

// Who may use the socket of a ready connection. io: the I/O thread (it
// reads, it writes or lets idle callers write). parked: nobody (idle, and
// the I/O thread has no read pending): a sync caller may take it. caller:
// one sync caller writes its request and reads its reply.
enum class Owner { io, parked, caller };

thread_local bool t_sync_call = false;
std::atomic<uint64_t> g_inline_answers{0};

// A sync caller's reply reader, kept between calls: it is left drained
// after each call it finishes, and reset after one it gives back.
ReplyReader& inline_reader() {
  thread_local ReplyReader reader;
  return reader;
}

// How often the I/O thread looks at direct writes while they go on, if no
// reply made it look sooner: a request whose deadline comes earlier wakes
// the I/O thread itself.
constexpr std::chrono::milliseconds kDirectWatch{50};

// While parked the socket blocks, with a receive timeout of kRecvStep: a
// sync caller waits for its reply in recv itself (one syscall; poll, then
// recv, were two). The kernel may end the wait up to two clock ticks (at
// most 10 ms each) late, so the last kPollFrom before a deadline is waited
// with ppoll, which keeps to it exactly.
constexpr std::chrono::milliseconds kRecvStep{10};
constexpr std::chrono::milliseconds kPollFrom{50};

// Makes a released socket block in recv for at most kRecvStep. False, and
// the socket as it was, when it cannot.
bool block_in_recv(int fd) {
  const timeval step{0, std::chrono::microseconds(kRecvStep).count()};
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &step, sizeof step) != 0) return false;
  int off = 0;
  return ::ioctl(fd, FIONBIO, &off) == 0;
}

// A caller's write: what the socket takes without blocking. Full or
// failing, it stops; the I/O thread's write of the rest finds out which.
size_t send_now(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n =
        ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  return sent;
}

std::string name_of(const NodeOptions& o) {
  if (o.sentinel.sentinels.empty()) {
    return std::string(o.tls.enabled ? "rediss " : "redis ") + o.host + ":" +
           std::to_string(o.port);
  }
  return "redis master " + quote(o.sentinel.master_name) + " via sentinel";
}

std::shared_ptr<asio::ssl::context> tls_context_of(const TlsOptions& tls) {
  return tls.enabled ? make_tls_context(tls) : nullptr;
}

class NodeConnection final : public Connection {
 public:
  NodeConnection(asio::io_context& io, NodeOptions options)
      : io_(io),
        options_(std::move(options)),
        name_(name_of(options_)),
        stream_(io, tls_context_of(options_.tls)),
        handshake_(io, stream_, options_),
        address_resolver_(make_resolver(io, options_)),
        deadline_timer_(io),
        backoff_timer_(io),
        liveness_timer_(io),
        watch_timer_(io),
        random_(std::random_device{}()) {
    reset_reader();
    // The sentinel announced a failover: whatever is on this connection goes
    // to a demoted master from now on.
    address_resolver_->on_moved([this](std::string announcement) {
      if (state_ == State::closed || state_ == State::backoff) return;
      lose_connection(failure(
          Code::backend_unavailable,
          "the sentinel moved the master (+switch-master " + quote(announcement, 100) + ")"));
    });
    asio::post(io_, [this] { connect(); });
  }

  // When nothing is being written and nothing waits to be, the caller writes
  // its request to the socket itself: the I/O thread, which still reads every
  // reply, is not woken to write it. Otherwise the request waits in the inbox
  // for the I/O thread's next write.
  // A sync caller (SyncCall) that finds the socket parked takes it, writes
  // and reads its reply itself (answer_inline).
  void send(Request request) override {
    const bool sync = std::exchange(t_sync_call, false);
    bool wake = false;
    {
      std::unique_lock lock(inbox_mutex_);
      if (refusing_) throw Error(Code::shutdown, "store: closed");
      if (sync && owner_ == Owner::parked) {
        owner_ = Owner::caller;
        const int fd = park_fd_;
        const bool blocking = park_blocking_;
        lock.unlock();
        return answer_inline(fd, blocking, std::move(request));
      }
      sync_seen_ = sync_seen_ || sync;
      if (owner_ == Owner::io && direct_ok_ && inbox_.empty()) {
        wake = write_direct(std::move(request));
      } else {
        inbox_.push_back(std::move(request));
        wake = true;
        // The I/O thread takes the socket back: at once when parked, once
        // the caller that has it is done otherwise.
        if (owner_ == Owner::parked) owner_ = Owner::io;
        if (owner_ == Owner::caller) wanted_ = true;
      }
      // One wake-up per burst: everything queued by then leaves together.
      wake = wake && !woken_;
      woken_ = woken_ || wake;
    }
    if (wake) asio::post(io_, [this] { take_inbox(); });
  }

  Failure wait_first_attempt(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(first_mutex_);
    first_done_.wait_for(lock, timeout, [this] { return first_.has_value(); });
    return first_.value_or(Failure{});
  }

  void refuse_new() override {
    std::lock_guard lock(inbox_mutex_);
    refusing_ = true;
  }

  void shut_down() override {
    std::vector<Request> inbox;
    {
      std::lock_guard lock(inbox_mutex_);
      refusing_ = true;
      inbox.swap(inbox_);
    }
    if (state_ != State::closed) {
      drop_socket();
      deadline_timer_.cancel();
      backoff_timer_.cancel();
      liveness_timer_.cancel();
      watch_timer_.cancel();
      state_ = State::closed;
    }
    const Failure closed{Code::shutdown, "store: closed"};
    report_first(closed);
    Completions completions = pipeline_.fail_all(closed);
    for (Request& r : inbox) completions.push_back(Completion{std::move(r.done), closed, {}});
    run_all(completions);
  }

  const std::string& name() const override { return name_; }
  uint64_t connections() const override { return connections_.load(std::memory_order_relaxed); }

 private:
  enum class State { connecting, ready, backoff, closed };

  // With Sentinel the node moves: the message says where it was.
  Failure failure(Code code, const std::string& why) const {
    const bool moves = !options_.sentinel.sentinels.empty() && !address_.host.empty();
    return Failure{code, name_ +
                             (moves ? " at " + address_.host + ":" + std::to_string(address_.port)
                                    : std::string()) +
                             ": " + why};
  }

  void reset_reader() { reader_.reset(); }

  // ---- requests ----

  // Caller's thread, inbox_mutex_ held (so the I/O thread neither writes nor
  // closes the socket meanwhile). Returns whether the I/O thread must be
  // woken: the socket took only part of the request, or the request's
  // deadline comes before the I/O thread's next look.
  bool write_direct(Request request) {
    Direct d{std::move(request), {}, SteadyClock::now()};
    const std::string& bytes = d.request.commands;
    const size_t sent = send_now(direct_fd_, bytes);
    const bool partial = sent < bytes.size();
    if (partial) d.rest = bytes.substr(sent);  // the I/O thread writes it first
    direct_ok_ = false;                        // busy until the I/O thread sees it idle
    d.request.commands.clear();
    const bool watched = watching_ && watch_until_ <= d.request.deadline;
    direct_.push_back(std::move(d));
    ++direct_writes_;
    return partial || !watched;
  }

  // Caller's thread, owning the socket: nothing is in flight on it, and the
  // I/O thread neither reads nor writes it until the caller hands it back.
  // The caller writes, then waits for its replies until its deadline (or the
  // liveness bound): in recv while the deadline is further than kPollFrom
  // and the socket blocks, with ppoll otherwise. It runs `done` itself. Anything out
  // of the ordinary goes back to the I/O thread, which then sees the same
  // bytes and the same socket as if it had done the call: the failures,
  // their messages and the reconnects are its own.
  void answer_inline(int fd, bool blocking, Request request) {
    Handback back;
    back.request = std::move(request);
    // A readable idle socket (the server closed it, a stray reply) is the
    // I/O thread's to read before anything is written.
    pollfd quiet{fd, POLLIN, 0};
    if (::poll(&quiet, 1, 0) != 0) return give_back(std::move(back));
    const std::string& bytes = back.request.commands;
    const size_t sent = send_now(fd, bytes);
    back.written = true;
    back.written_at = SteadyClock::now();
    if (sent < bytes.size()) {
      back.rest = bytes.substr(sent);
      return give_back(std::move(back));
    }
    // Past the liveness bound the I/O thread drops the connection, as it
    // would have with the request in its own hands.
    const Deadline until =
        std::min(back.request.deadline, back.written_at + options_.liveness_timeout);
    ReplyReader& reader = inline_reader();
    std::vector<Reply> replies;
    std::array<char, 16 * 1024> buffer;
    while (replies.size() < back.request.count) {
      const auto left = until - SteadyClock::now();
      if (left <= SteadyClock::duration::zero()) return give_back(std::move(back));
      ssize_t n = 0;
      if (blocking && left > kPollFrom) {
        // Until bytes come, or kRecvStep passes (EAGAIN: look again).
        n = ::recv(fd, buffer.data(), buffer.size(), 0);
      } else {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        const timespec wait{static_cast<time_t>(ns / 1000000000),
                            static_cast<long>(ns % 1000000000)};
        pollfd readable{fd, POLLIN, 0};
        const int ready = ::ppoll(&readable, 1, &wait, nullptr);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return give_back(std::move(back));
        n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      // Closed or failing: the I/O thread's own read says which.
      if (n <= 0) return give_back(std::move(back));
      back.read.append(buffer.data(), static_cast<size_t>(n));
      if (!reader.feed(std::string_view(buffer.data(), static_cast<size_t>(n))))
        return give_back(std::move(back));
      while (replies.size() < back.request.count) {
        std::optional<Reply> reply = reader.next();
        if (!reply) break;
        replies.push_back(std::move(*reply));
      }
      if (reader.failed()) return give_back(std::move(back));
    }
    // More than its replies (a broken stream), or a demoted master's
    // READONLY (Sentinel): the I/O thread's to act on.
    const bool readonly = std::any_of(replies.begin(), replies.end(), [](const Reply& r) {
      return r.is_error() && r.text.compare(0, 8, "READONLY") == 0;
    });
    if (readonly || !reader.drained()) return give_back(std::move(back));
    hand_over(nullptr);
    g_inline_answers.fetch_add(1, std::memory_order_relaxed);
    back.request.done(Failure{}, std::move(replies));
  }

  void give_back(Handback&& back) {
    inline_reader().reset();
    hand_over(&back);
  }

  // Caller's thread: the socket goes back, parked for the next sync caller,
  // or to the I/O thread when it wants it (a request came meanwhile, the
  // caller gives one back, the I/O thread is closing the socket).
  void hand_over(Handback* back) {
    bool wake = false;
    {
      std::lock_guard lock(inbox_mutex_);
      if (back != nullptr) handback_ = std::move(*back);
      if (reclaiming_) {
        owner_ = Owner::io;
        owner_free_.notify_all();
        return;
      }
      if (back == nullptr && !wanted_) {
        owner_ = Owner::parked;
        return;
      }
      owner_ = Owner::io;
      wanted_ = false;
      wake = !woken_;
      woken_ = true;
    }
    if (wake) asio::post(io_, [this] { take_inbox(); });
  }

  // I/O thread: a request a caller gave back joins the pipeline, and the
  // bytes it read are read again.
  void take_handback(Handback&& back) {
    if (!back.written) return pipeline_.enqueue(std::move(back.request));
    if (!pipeline_.awaiting()) {
      waiting_since_ = back.written_at;
      arm_liveness();
    }
    rest_ += back.rest;
    pipeline_.add_written(std::move(back.request));
    arm_deadline();
    if (!back.read.empty()) on_bytes(back.read);
  }

  // I/O thread, before it drops the socket: a caller that has it is woken
  // (the socket is shut down under its poll) and waited for; what it gives
  // back fails with the rest.
  void reclaim() {
    if (!parked_) return;
    std::optional<Handback> back;
    {
      std::unique_lock lock(inbox_mutex_);
      if (owner_ == Owner::caller) {
        reclaiming_ = true;
        ::shutdown(park_fd_, SHUT_RDWR);
        owner_free_.wait(lock, [this] { return owner_ != Owner::caller; });
        reclaiming_ = false;
      }
      owner_ = Owner::io;
      wanted_ = false;
      back.swap(handback_);
    }
    if (parked_) rejoin_loop();  // then closed with the socket
    if (!back) return;
    if (back->written) {
      pipeline_.add_written(std::move(back->request));
    } else {
      pipeline_.enqueue(std::move(back->request));
    }
  }

  // I/O thread: the socket is its own again; reading resumes.
  void resume() {
    if (!take_socket()) return;
    if (state_ == State::ready && !read_pending_) read();
  }

  // Back into the event loop. False when it was not parked, or (with
  // the connection lost) when it cannot be.
  bool take_socket() {
    if (!parked_) return false;
    if (const error_code ec = rejoin_loop()) {
      lose_connection(failure(Code::backend_unavailable, "socket: " + ec.message()));
      return false;
    }
    return true;
  }

  error_code rejoin_loop() {
    parked_ = false;
    error_code ec;
    int on = 1;
    if (park_blocking_ && ::ioctl(park_fd_, FIONBIO, &on) != 0)
      ec = error_code(errno, boost::system::system_category());
    park_blocking_ = false;
    if (!ec) stream_.socket().assign(protocol_, park_fd_, ec);
    if (ec) ::close(park_fd_);  // not the event loop's: nobody else would close it
    return ec;
  }

  // I/O thread: requests written by their callers join those in flight, in
  // the order they were written. Run before reading replies and before
  // writing or dropping the socket.
  void admit_direct(std::vector<Direct>& batch) {
    if (batch.empty()) return;
    if (!pipeline_.awaiting()) {
      waiting_since_ = batch.front().written_at;
      arm_liveness();
    }
    for (Direct& d : batch) {
      rest_ += d.rest;
      pipeline_.add_written(std::move(d.request));
    }
    batch.clear();
    arm_deadline();
  }

  void admit_direct() {
    std::vector<Direct> batch;
    {
      std::lock_guard lock(inbox_mutex_);
      batch.swap(direct_);
    }
    admit_direct(batch);
  }

  // Before the I/O thread writes or drops the socket: callers stop writing to
  // it, and what they wrote takes its place in flight first.
  void stop_direct() {
    std::vector<Direct> batch;
    {
      std::lock_guard lock(inbox_mutex_);
      direct_ok_ = false;
      batch.swap(direct_);
    }
    admit_direct(batch);
  }

  // A caller may write only to an idle connection: nothing being written,
  // waiting to be, or awaiting replies. Concurrent callers thus still share
  // the I/O thread's writes (one write per burst), and a lone caller, once
  // its reply is in, writes its next request itself. Only on plain TCP: a
  // TLS session's state belongs to the I/O thread.
  // After a sync call the idle socket is parked instead: the I/O thread
  // stops reading it, and the next sync caller reads its own reply.
  void allow_direct_if_idle() {
    if (state_ != State::ready || writing_ || !pipeline_.empty() || !rest_.empty() ||
        stream_.is_tls() || parked_)
      return;
    std::lock_guard lock(inbox_mutex_);
    if (!direct_.empty()) return;  // a caller wrote meanwhile: its replies come first
    const int fd = stream_.socket().native_handle();
    if (sync_seen_ && !woken_) {
      // Out of the event loop while parked (its pending read ends, aborted):
      // the replies callers read do not wake the I/O thread.
      error_code ec;
      protocol_ = stream_.socket().local_endpoint(ec).protocol();
      if (!ec) stream_.socket().release(ec);
      if (ec) {
        direct_ok_ = true;
        direct_fd_ = fd;
        return;
      }
      parked_ = true;
      owner_ = Owner::parked;
      park_fd_ = fd;
      park_blocking_ = block_in_recv(fd);
      sync_seen_ = false;
      direct_ok_ = false;
      return;
    }
    direct_ok_ = true;
    direct_fd_ = fd;
  }

  // While callers write directly, look at their requests at least every
  // kDirectWatch; stop once a whole period passed without one.
  void watch_direct() {
    std::vector<Direct> batch;
    bool again = false;
    {
      std::lock_guard lock(inbox_mutex_);
      batch.swap(direct_);
      again = direct_writes_ > 0 && state_ != State::closed;
      direct_writes_ = 0;
      watching_ = again;
      if (again) watch_until_ = SteadyClock::now() + kDirectWatch;
    }
    admit_direct(batch);
    if (!again) return;
    watch_timer_.expires_at(watch_until_);
    watch_timer_.async_wait([this](error_code ec) {
      if (!ec) watch_direct();
    });
  }

  void take_inbox() {
    std::vector<Request> batch;
    std::vector<Direct> direct;
    std::optional<Handback> back;
    bool start_watch = false;
    bool take_back = false;
    {
      std::lock_guard lock(inbox_mutex_);
      batch.swap(inbox_);
      direct.swap(direct_);
      back.swap(handback_);
      woken_ = false;
      start_watch = !watching_ && direct_writes_ > 0;
      take_back = parked_ && owner_ == Owner::io;
    }
    if (back) take_handback(std::move(*back));
    if (take_back) resume();
    admit_direct(direct);
    if (start_watch) watch_direct();
    Completions refused;
    for (Request& r : batch) {
      if (state_ == State::backoff) {
        refused.push_back(
            Completion{std::move(r.done),
                       Failure{last_failure_.code, last_failure_.message + " (reconnecting)", true},
                       {}});
      } else if (state_ == State::closed) {
        refused.push_back(
            Completion{std::move(r.done), Failure{Code::shutdown, "store: closed"}, {}});
      } else {
        pipeline_.enqueue(std::move(r));
      }
    }
    arm_deadline();
    flush();
    run_all(refused);
  }

  // Everything waiting leaves in one write; what arrives meanwhile waits for
  // the next one.
  void flush() {
    if (state_ != State::ready || writing_ || parked_) return;
    stop_direct();
    if (!pipeline_.has_unsent() && rest_.empty()) return allow_direct_if_idle();
    write_buffer_ = std::exchange(rest_, {});
    const bool was_waiting = pipeline_.awaiting();
    write_buffer_ += pipeline_.take_write();
    if (!was_waiting && pipeline_.awaiting()) await_replies();
    write();
  }

  void write() {
    writing_ = true;
    stream_.async_write(asio::buffer(write_buffer_),
                        [this, gen = generation_](error_code ec, size_t) {
                          if (gen != generation_) return;
                          writing_ = false;
                          if (ec) return lose_connection(io_failure("write failed", ec));
                          flush();
                        });
  }

  void read() {
    read_pending_ = true;
    stream_.async_read_some(asio::buffer(read_buffer_),
                            [this, gen = generation_](error_code ec, size_t n) {
                              if (gen != generation_) return;
                              read_pending_ = false;
                              // Canceled when the socket was parked: it may be taken back since.
                              if (ec == asio::error::operation_aborted) {
                                if (!parked_ && state_ == State::ready) read();
                                return;
                              }
                              if (ec) return lose_connection(io_failure("read failed", ec));
                              if (on_bytes(std::string_view(read_buffer_.data(), n)) && !parked_)
                                read();
                            });
  }

  // Bytes read from the socket (or by a caller that gave its request back).
  // False once the connection was lost meanwhile.
  bool on_bytes(std::string_view bytes) {
    const uint64_t gen = generation_;
    admit_direct();                       // replies to them may be among these bytes
    waiting_since_ = SteadyClock::now();  // the peer is alive
    if (!reader_.feed(bytes)) {
      lose_connection(failure(Code::backend_unavailable, reader_.error()));
      return false;
    }
    while (gen == generation_) {
      std::optional<Reply> reply = reader_.next();
      if (reader_.failed()) {
        lose_connection(failure(Code::backend_unavailable, reader_.error()));
        return false;
      }
      if (!reply) break;
      on_reply(std::move(*reply));
    }
    return gen == generation_;
  }

  void on_reply(Reply reply) {
    // A demoted master (Sentinel moved the master away) answers READONLY:
    // the connection goes to find the new one.
    const bool demoted = reply.is_error() && address_resolver_->follows_failover() &&
                         reply.text.compare(0, 8, "READONLY") == 0;
    Completion done;
    switch (pipeline_.on_reply(std::move(reply), done)) {
      case Pipeline::Matched::unexpected:
        return lose_connection(
            failure(Code::backend_unavailable, "protocol error: a reply nobody asked for"));
      case Pipeline::Matched::partial: break;
      case Pipeline::Matched::complete:
        // Before the completion runs: a sync caller it wakes writes its next
        // request itself.
        if (!pipeline_.awaiting() && !demoted) allow_direct_if_idle();
        if (done.done) done.run();
        break;
    }
    if (demoted && state_ == State::ready) {
      lose_connection(failure(Code::backend_unavailable,
                              "answered READONLY: no longer the master, asking the sentinels"));
    }
  }

  // What a failed read or write of a ready connection says: the peer closed,
  // TLS failed, or the socket's error. Once connected, a TLS error is the
  // connection's, not the setup's: an outage like any other.
  Failure io_failure(const char* what, const error_code& ec) {
    switch (classify_stream_error(ec)) {
      case StreamFault::closed:
        return failure(Code::backend_unavailable, "connection closed by the server");
      case StreamFault::socket:
        return failure(Code::backend_unavailable, std::string(what) + ": " + ec.message());
      default:
        return failure(Code::backend_unavailable, std::string(what) + ": TLS: " + ec.message());
    }
  }

  // ---- liveness: replies awaited, nothing read for liveness_timeout ----

  // A half-open peer (a dead host behind a proxy or NAT that still
  // acknowledges, or one whose FIN/RST was lost) never answers and never
  // closes: without this the connection would wait forever and every request
  // written to it would time out.
  void await_replies() {
    waiting_since_ = SteadyClock::now();
    arm_liveness();
  }

  void arm_liveness() {
    if (liveness_armed_) return;
    liveness_armed_ = true;
    liveness_timer_.expires_at(waiting_since_ + options_.liveness_timeout);
    liveness_timer_.async_wait([this, gen = generation_](error_code ec) {
      if (ec || gen != generation_) return;
      liveness_armed_ = false;
      if (!pipeline_.awaiting()) return;
      if (SteadyClock::now() < waiting_since_ + options_.liveness_timeout) return arm_liveness();
      lose_connection(failure(Code::backend_unavailable, presumed_dead(options_.liveness_timeout)));
    });
  }

  // ---- deadlines: one timer, armed for the earliest one ----

  void arm_deadline() {
    const std::optional<Deadline> next = pipeline_.earliest_deadline();
    if (!next || (armed_ && *next >= armed_at_)) return;
    armed_ = true;
    armed_at_ = *next;
    deadline_timer_.expires_at(*next);
    deadline_timer_.async_wait([this](error_code ec) {
      if (ec) return;
      armed_ = false;
      expire();
    });
  }

  void expire() {
    const std::string waiting = state_ == State::ready
                                    ? "not written before the deadline"
                                    : "not connected before the deadline (still connecting)";
    Completions late =
        pipeline_.expire(SteadyClock::now(), failure(Code::timeout, "no reply before the deadline"),
                         failure(Code::timeout, waiting));
    arm_deadline();
    run_all(late);
  }

  // ---- connecting ----

  // The node's address first (with Sentinel, from the sentinels: each is
  // given connect_timeout), then the handshake within connect_timeout.
  void connect() {
    if (state_ == State::closed) return;
    state_ = State::connecting;
    const uint64_t gen = ++generation_;
    address_resolver_->resolve([this, gen](Failure&& f, Address&& address) {
      if (gen != generation_) return;
      if (f) return lose_connection(Failure{f.code, name_ + ": " + f.message});
      address_ = std::move(address);
      handshake_.start(address_, address_resolver_->follows_failover(), [this, gen](Failure&& why) {
        if (gen != generation_) return;
        if (why) return lose_connection(failure(why.code, why.message));
        connected();
      });
    });
  }

  void connected() {
    state_ = State::ready;
    connections_.fetch_add(1, std::memory_order_relaxed);
    attempts_ = 0;
    report_first(Failure{});
    read();
    flush();
  }

  void report_first(const Failure& f) {
    std::lock_guard lock(first_mutex_);
    if (first_) return;
    first_ = f;
    first_done_.notify_all();
  }

  void drop_socket() {
    // What callers wrote to it fails with the rest of what is in flight.
    reclaim();
    stop_direct();
    rest_.clear();
    ++generation_;  // callbacks of the old socket see a new generation and stop
    stream_.close();
    address_resolver_->cancel();
    handshake_.cancel();
    liveness_timer_.cancel();
    liveness_armed_ = false;
    writing_ = false;
    read_pending_ = false;
    reset_reader();
  }

  void lose_connection(Failure f) {
    if (state_ == State::closed) return;
    drop_socket();
    state_ = State::backoff;
    last_failure_ = f;
    report_first(f);
    Completions failed = pipeline_.fail_all(f);
    schedule_reconnect();
    run_all(failed);
  }

  // 10 ms doubling per failed attempt up to reconnect_max, each delay drawn
  // from [half, full] so that many clients do not reconnect in step.
  void schedule_reconnect() {
    const auto cap =
        std::min<int64_t>(options_.reconnect_max.count(), int64_t{10} << std::min(attempts_, 20));
    ++attempts_;
    std::uniform_int_distribution<int64_t> jitter(cap / 2, cap);
    backoff_timer_.expires_after(std::chrono::milliseconds(jitter(random_)));
    backoff_timer_.async_wait([this, gen = generation_](error_code ec) {
      if (ec || gen != generation_ || state_ != State::backoff) return;
      connect();
    });
  }

  asio::io_context& io_;
  const NodeOptions options_;
  const std::string name_;

  // Guards what callers share with the I/O thread (any thread): the inbox,
  // direct writes, and the socket while a caller writes to it.
  std::mutex inbox_mutex_;
  std::vector<Request> inbox_;
  bool refusing_ = false;
  bool woken_ = false;      // take_inbox is posted and has not run yet
  bool direct_ok_ = false;  // callers may write to direct_fd_ (set by the I/O thread)
  int direct_fd_ = -1;
  std::vector<Direct> direct_;  // written by callers, not yet admitted
  uint64_t direct_writes_ = 0;  // since the last watch
  bool watching_ = false;       // the watch timer runs; next look at watch_until_
  Deadline watch_until_;
  Owner owner_ = Owner::io;
  int park_fd_ = -1;            // released from the event loop while parked
  bool park_blocking_ = false;  // park_fd_ blocks in recv (block_in_recv)
  bool sync_seen_ = false;      // a sync call came since the socket was last parked
  bool wanted_ = false;         // a request waits for the caller that has the socket
  bool reclaiming_ = false;     // the I/O thread waits for that caller (owner_free_)
  std::condition_variable owner_free_;
  std::optional<Handback> handback_;

  std::mutex first_mutex_;  // the first attempt's result, for open
  std::condition_variable first_done_;
  std::optional<Failure> first_;
  std::atomic<uint64_t> connections_{0};  // handshakes done (connections())

  // I/O thread only from here on.
  Stream stream_;
  Handshake handshake_;  // of the current connection attempt
  std::unique_ptr<AddressResolver> address_resolver_;
  Address address_;  // of the current (or last) connection attempt
  asio::steady_timer deadline_timer_;
  asio::steady_timer backoff_timer_;
  asio::steady_timer liveness_timer_;
  asio::steady_timer watch_timer_;
  std::mt19937_64 random_;
  ReplyReader reader_;  // replies of the current connection
  State state_ = State::connecting;
  uint64_t generation_ = 0;
  int attempts_ = 0;
  Failure last_failure_;
  Pipeline pipeline_;
  std::string rest_;  // of a direct write: leaves before anything else
  bool writing_ = false;
  bool read_pending_ = false;
  tcp protocol_ = tcp::v4();  // of the parked socket
  bool parked_ = false;       // the socket is not the I/O thread's (owner_ not io, or not yet seen)
  std::string write_buffer_;
  std::array<char, 64 * 1024> read_buffer_;
  bool armed_ = false;
  Deadline armed_at_;
  bool liveness_armed_ = false;
  Deadline waiting_since_;  // replies awaited, nothing read since
};

}  // namespace

SyncCall::SyncCall() {
  t_sync_call = true;
}
SyncCall::~SyncCall() {
  t_sync_call = false;
}
void forgo_sync_call() {
  t_sync_call = false;
}

uint64_t sync_calls_answered_inline() {
  return g_inline_answers.load(std::memory_order_relaxed);
}

std::string format_command(const std::vector<std::string_view>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  char* formatted = nullptr;
  const int n = redisFormatCommandArgv(&formatted, static_cast<int>(args.size()), argv.data(),
                                       lengths.data());
  if (n < 0 || formatted == nullptr) throw Error(Code::no_memory, "redis: cannot format a command");
  std::string out(formatted, static_cast<size_t>(n));
  redisFreeCommand(formatted);
  return out;
}

std::unique_ptr<Connection> Connection::create(boost::asio::io_context& io, NodeOptions options) {
  return std::make_unique<NodeConnection>(io, std::move(options));
}

}  // namespace rl::redis
