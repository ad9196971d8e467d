#include "connection.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

#include "direct_path.h"
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
using error_code = boost::system::error_code;
using SteadyClock = std::chrono::steady_clock;

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
        direct_(stream_, options_.liveness_timeout),
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
    const bool sync = take_sync_call();
    bool wake = false;
    {
      std::unique_lock lock(callers_mutex_);
      if (refusing_) throw Error(Code::shutdown, "store: closed");
      DirectPath::Socket socket;
      if (sync && direct_.take_parked(socket)) {
        lock.unlock();
        return answer_inline(socket, std::move(request));
      }
      direct_.note_call(sync);
      if (direct_.may_write() && inbox_.empty()) {
        wake = direct_.write(std::move(request));
      } else {
        inbox_.push_back(std::move(request));
        wake = true;
        direct_.want_socket();
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
    std::lock_guard lock(callers_mutex_);
    refusing_ = true;
  }

  void shut_down() override {
    std::vector<Request> inbox;
    {
      std::lock_guard lock(callers_mutex_);
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

  // ---- the direct path (direct_path.h): callers' writes and sync calls ----

  // Caller's thread, owning the socket (taken parked): it writes, reads its
  // reply and runs `done` itself, or hands the request back.
  void answer_inline(DirectPath::Socket socket, Request request) {
    Handback back;
    back.request = std::move(request);
    std::vector<Reply> replies;
    if (!direct_.answer(socket, back, replies)) return hand_over(&back);
    hand_over(nullptr);
    back.request.done(Failure{}, std::move(replies));
  }

  // Caller's thread: the socket goes back, parked for the next sync caller,
  // or to the I/O thread when it wants it (a request came meanwhile, the
  // caller gives one back, the I/O thread is closing the socket).
  void hand_over(Handback* back) {
    bool wake = false;
    {
      std::lock_guard lock(callers_mutex_);
      if (!direct_.release(back)) return;
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
  // and waited for; what it gives back fails with the rest.
  void reclaim() {
    if (!direct_.parked()) return;
    std::optional<Handback> back;
    {
      std::unique_lock lock(callers_mutex_);
      direct_.reclaim(lock, back);
    }
    if (direct_.parked()) direct_.rejoin();  // then closed with the socket
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
    if (!direct_.parked()) return false;
    if (const error_code ec = direct_.rejoin()) {
      lose_connection(failure(Code::backend_unavailable, "socket: " + ec.message()));
      return false;
    }
    return true;
  }

  // I/O thread: requests written by their callers join those in flight, in
  // the order they were written. Run before reading replies and before
  // writing or dropping the socket.
  void admit_direct(std::vector<DirectWrite>& batch) {
    if (batch.empty()) return;
    if (!pipeline_.awaiting()) {
      waiting_since_ = batch.front().written_at;
      arm_liveness();
    }
    for (DirectWrite& d : batch) {
      rest_ += d.rest;
      pipeline_.add_written(std::move(d.request));
    }
    batch.clear();
    arm_deadline();
  }

  void admit_direct() {
    std::vector<DirectWrite> batch;
    {
      std::lock_guard lock(callers_mutex_);
      direct_.take_written(batch);
    }
    admit_direct(batch);
  }

  // Before the I/O thread writes or drops the socket: callers stop writing to
  // it, and what they wrote takes its place in flight first.
  void stop_direct() {
    std::vector<DirectWrite> batch;
    {
      std::lock_guard lock(callers_mutex_);
      direct_.stop(batch);
    }
    admit_direct(batch);
  }

  // A caller may write only to an idle connection: nothing being written,
  // waiting to be (in the pipeline or still in the inbox), or awaiting
  // replies. Concurrent callers thus still share the I/O thread's writes
  // (one write per burst), and a lone caller, once its reply is in, writes
  // its next request itself. After a sync call the idle socket is parked
  // instead: the I/O thread stops reading it, and the next sync caller
  // reads its own reply.
  void allow_direct_if_idle() {
    if (state_ != State::ready || writing_ || !pipeline_.empty() || !rest_.empty() ||
        !direct_.may_open())
      return;
    std::lock_guard lock(callers_mutex_);
    // Requests in the inbox were sent before any a caller would write now:
    // take_inbox writes them first. Opened now, a caller could write once
    // take_inbox took them and before it wrote them, and overtake them.
    if (!inbox_.empty()) return;
    direct_.open(woken_);
  }

  // While callers write directly, look at their requests at least every
  // kDirectWatch (direct_path.cpp); stop once a whole period passed without one.
  void watch_direct() {
    std::vector<DirectWrite> batch;
    std::optional<Deadline> next;
    {
      std::lock_guard lock(callers_mutex_);
      direct_.take_written(batch);
      next = direct_.next_watch(state_ != State::closed);
    }
    admit_direct(batch);
    if (!next) return;
    watch_timer_.expires_at(*next);
    watch_timer_.async_wait([this](error_code ec) {
      if (!ec) watch_direct();
    });
  }

  // ---- requests ----

  void take_inbox() {
    std::vector<Request> batch;
    std::vector<DirectWrite> direct;
    std::optional<Handback> back;
    bool start_watch = false;
    bool take_back = false;
    {
      std::lock_guard lock(callers_mutex_);
      batch.swap(inbox_);
      direct_.take_written(direct);
      direct_.take_handback(back);
      woken_ = false;
      start_watch = direct_.watch_needed();
      take_back = direct_.socket_wanted_back();
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
    if (state_ != State::ready || writing_ || direct_.parked()) return;
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
    stream_.async_read_some(
        asio::buffer(read_buffer_), [this, gen = generation_](error_code ec, size_t n) {
          if (gen != generation_) return;
          read_pending_ = false;
          // Canceled when the socket was parked: it may be taken back since.
          if (ec == asio::error::operation_aborted) {
            if (!direct_.parked() && state_ == State::ready) read();
            return;
          }
          if (ec) return lose_connection(io_failure("read failed", ec));
          if (on_bytes(std::string_view(read_buffer_.data(), n)) && !direct_.parked()) read();
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
  // and the direct path's state (direct_path.h), so that a caller decides
  // between writing itself and queuing at once.
  std::mutex callers_mutex_;
  std::vector<Request> inbox_;
  bool refusing_ = false;
  bool woken_ = false;  // take_inbox is posted and has not run yet

  std::mutex first_mutex_;  // the first attempt's result, for open
  std::condition_variable first_done_;
  std::optional<Failure> first_;
  std::atomic<uint64_t> connections_{0};  // handshakes done (connections())

  Stream stream_;
  // Who may use the socket, and what callers wrote to it themselves.
  DirectPath direct_;

  // I/O thread only from here on.
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
  std::string write_buffer_;
  std::array<char, 64 * 1024> read_buffer_;
  bool armed_ = false;
  Deadline armed_at_;
  bool liveness_armed_ = false;
  Deadline waiting_since_;  // replies awaited, nothing read since
};

}  // namespace

std::unique_ptr<Connection> Connection::create(boost::asio::io_context& io, NodeOptions options) {
  return std::make_unique<NodeConnection>(io, std::move(options));
}

}  // namespace rl::redis
