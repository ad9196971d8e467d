// The direct path of a connection: a caller writes its request to the
// socket itself, and a sync caller (SyncCall) alone on the connection also
// reads its own reply, so the I/O thread is not woken for either. It is
// apart from the connection (connection.cpp), which keeps the I/O thread's
// loop and admits what callers wrote into its pipeline.
//
// Who may touch the socket of a ready connection, and when (Owner):
//  - io: the I/O thread reads and writes it. While the connection is idle
//    on plain TCP it lets callers write to it too (may_write), under the
//    connection's lock, never read it; it admits what they wrote before it
//    reads replies, writes, or drops the socket.
//  - parked: after a sync call left the connection idle, the I/O thread
//    released the socket from its event loop (it blocks in recv now) and
//    nobody uses it. The next sync caller takes it.
//  - caller: that one sync caller writes and reads it without the lock;
//    nobody else touches it. It gives the socket back parked (answered), or
//    to the I/O thread (a request came meanwhile, or it could not finish:
//    its Handback, which the I/O thread handles as if it had made the call).
// Any other request takes a parked socket back to the I/O thread, and before
// the I/O thread drops the socket it reclaims it: it shuts the socket down
// under a caller that has it and waits for it.
// Members run with the connection's lock held unless they say otherwise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "connection.h"
#include "reply.h"
#include "stream.h"

namespace rl::redis {

// A request its caller wrote to the socket itself: it joins the requests in
// flight when the I/O thread next looks. `rest` is what the socket did not
// take; the I/O thread writes it before anything else.
struct DirectWrite {
  Request request;
  std::string rest;
  Deadline written_at;
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
  Deadline written_at;
};

namespace detail {
extern constinit thread_local bool t_sync_call;  // a SyncCall lives on this thread
}

// Whether this send() is a sync call's (SyncCall); the next one is not.
inline bool take_sync_call() {
  return std::exchange(detail::t_sync_call, false);
}

class DirectPath {
 public:
  // A parked socket, as the sync caller that took it uses it.
  struct Socket {
    int fd = -1;
    bool blocking = false;  // blocks in recv (for at most kRecvStep)
  };

  DirectPath(Stream& stream, std::chrono::milliseconds liveness_timeout)
      : stream_(stream), liveness_timeout_(liveness_timeout) {}

  // ---- a caller's thread ----

  // A sync caller takes the parked socket.
  bool take_parked(Socket& out) {
    if (owner_ != Owner::parked) return false;
    owner_ = Owner::caller;
    out = Socket{park_fd_, park_blocking_};
    return true;
  }
  void note_call(bool sync) { sync_seen_ = sync_seen_ || sync; }
  bool may_write() const { return owner_ == Owner::io && direct_ok_; }
  // Writes what the socket takes without blocking. Returns whether the I/O
  // thread must be woken: the socket took only part of the request, or the
  // request's deadline comes before the I/O thread's next look.
  bool write(Request request);
  // A request waits for the I/O thread: it takes the socket back, at once
  // when parked, once the caller that has it is done otherwise.
  void want_socket() {
    if (owner_ == Owner::parked) owner_ = Owner::io;
    if (owner_ == Owner::caller) wanted_ = true;
  }

  // No lock: the caller that took the socket. It writes `back.request`,
  // then waits for its replies until its deadline (or the liveness bound).
  // True: answered, `replies` hold them. False: `back` goes to the I/O
  // thread (release).
  bool answer(Socket socket, Handback& back, std::vector<Reply>& replies);
  // The socket goes back: parked for the next sync caller, or to the I/O
  // thread (`back`, a request waiting, or the I/O thread reclaiming it).
  // True: the I/O thread must be woken to take it.
  bool release(Handback* back) {
    if (back != nullptr) handback_ = std::move(*back);
    if (reclaiming_) {
      owner_ = Owner::io;
      owner_free_.notify_all();
      return false;
    }
    if (back == nullptr && !wanted_) {
      owner_ = Owner::parked;
      return false;
    }
    owner_ = Owner::io;
    wanted_ = false;
    return true;
  }

  // ---- the I/O thread ----

  // No lock: the socket is out of the event loop (owner not io, or the I/O
  // thread has not taken it back yet).
  bool parked() const { return parked_; }
  // No lock: whether open() may leave the socket to callers at all. Only on
  // plain TCP: a TLS session's state belongs to the I/O thread.
  bool may_open() const { return !stream_.is_tls() && !parked_; }
  // The connection is idle: callers may write to its socket, or, after a
  // sync call and with the I/O thread not about to look (`woken`), the
  // socket is parked for the next sync caller.
  void open(bool woken);
  // Callers stop writing; what they wrote is the I/O thread's to admit.
  void stop(std::vector<DirectWrite>& written) {
    direct_ok_ = false;
    written.swap(written_);
  }
  void take_written(std::vector<DirectWrite>& written) { written.swap(written_); }
  void take_handback(std::optional<Handback>& back) { back.swap(handback_); }
  // A request came while parked: the I/O thread takes the socket back.
  bool socket_wanted_back() const { return parked_ && owner_ == Owner::io; }
  // Callers wrote since the watch stopped: it starts again.
  bool watch_needed() const { return !watching_ && writes_ > 0; }
  // While callers write, the I/O thread looks at what they wrote at least
  // every kDirectWatch: when to look next, none once a whole period passed
  // without a write (or the connection is closed: not `open`).
  std::optional<Deadline> next_watch(bool open);
  // Before the I/O thread drops the socket: a caller that has it is woken
  // (the socket is shut down under its recv) and waited for, with `lock`
  // (the connection's). `back`: what it gave back.
  void reclaim(std::unique_lock<std::mutex>& lock, std::optional<Handback>& back);
  // No lock: back into the event loop. On failure the socket is closed
  // (nobody else would close it).
  boost::system::error_code rejoin();

 private:
  enum class Owner { io, parked, caller };

  Stream& stream_;
  const std::chrono::milliseconds liveness_timeout_;

  // Under the connection's lock.
  Owner owner_ = Owner::io;
  bool direct_ok_ = false;  // callers may write to direct_fd_ (set by the I/O thread)
  int direct_fd_ = -1;
  std::vector<DirectWrite> written_;  // by callers, not yet admitted
  uint64_t writes_ = 0;               // since the last watch
  bool watching_ = false;             // the watch runs; next look at watch_until_
  Deadline watch_until_;
  int park_fd_ = -1;            // released from the event loop while parked
  bool park_blocking_ = false;  // park_fd_ blocks in recv
  bool sync_seen_ = false;      // a sync call came since the socket was last parked
  bool wanted_ = false;         // a request waits for the caller that has the socket
  bool reclaiming_ = false;     // the I/O thread waits for that caller (owner_free_)
  std::condition_variable owner_free_;
  std::optional<Handback> handback_;

  // The I/O thread's.
  bool parked_ = false;
  boost::asio::ip::tcp protocol_ = boost::asio::ip::tcp::v4();  // of the parked socket
};

}  // namespace rl::redis
