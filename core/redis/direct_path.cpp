#include "direct_path.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>

#include "reply_reader.h"

namespace rl::redis {

namespace detail {
constinit thread_local bool t_sync_call = false;
}

namespace {

using SteadyClock = std::chrono::steady_clock;
using error_code = boost::system::error_code;

std::atomic<uint64_t> g_inline_answers{0};

// A sync caller's reply reader, and the bytes it read in its current call,
// kept between calls: the reader is left drained after each call it
// finishes, and reset after one it gives back, which takes the bytes.
struct InlineReading {
  ReplyReader reader;
  std::string read;
};

InlineReading& inline_reading() {
  thread_local InlineReading reading;
  return reading;
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

// The caller hands `back` to the I/O thread, with the bytes it read: its
// reader starts afresh next time.
bool give_back(Handback& back) {
  InlineReading& reading = inline_reading();
  back.read = std::move(reading.read);
  reading.read.clear();
  reading.reader.reset();
  return false;
}

}  // namespace

SyncCall::SyncCall() {
  detail::t_sync_call = true;
}
SyncCall::~SyncCall() {
  detail::t_sync_call = false;
}
void forgo_sync_call() {
  detail::t_sync_call = false;
}

uint64_t sync_calls_answered_inline() {
  return g_inline_answers.load(std::memory_order_relaxed);
}

// Under the connection's lock, so the I/O thread neither writes nor closes
// the socket meanwhile.
bool DirectPath::write(Request request) {
  DirectWrite d{std::move(request), {}, SteadyClock::now()};
  const std::string& bytes = d.request.commands;
  const size_t sent = send_now(direct_fd_, bytes);
  const bool partial = sent < bytes.size();
  if (partial) d.rest = bytes.substr(sent);  // the I/O thread writes it first
  direct_ok_ = false;                        // busy until the I/O thread sees it idle
  d.request.commands.clear();
  const bool watched = watching_ && watch_until_ <= d.request.deadline;
  written_.push_back(std::move(d));
  ++writes_;
  return partial || !watched;
}

// Nothing is in flight on the socket, and the I/O thread neither reads nor
// writes it until the caller releases it. The caller waits for its replies
// in recv while the deadline is further than kPollFrom and the socket
// blocks, with ppoll otherwise. Anything out of the ordinary goes back to
// the I/O thread, which then sees the same bytes and the same socket as if
// it had done the call: the failures, their messages and the reconnects
// are its own.
bool DirectPath::answer(Socket socket, Handback& back, std::vector<Reply>& replies) {
  const int fd = socket.fd;
  InlineReading& reading = inline_reading();
  reading.read.clear();  // what the last call read
  // A readable idle socket (the server closed it, a stray reply) is the
  // I/O thread's to read before anything is written.
  pollfd quiet{fd, POLLIN, 0};
  if (::poll(&quiet, 1, 0) != 0) return give_back(back);
  const std::string& bytes = back.request.commands;
  const size_t sent = send_now(fd, bytes);
  back.written = true;
  back.written_at = SteadyClock::now();
  if (sent < bytes.size()) {
    back.rest = bytes.substr(sent);
    return give_back(back);
  }
  // Past the liveness bound the I/O thread drops the connection, as it
  // would have with the request in its own hands.
  const Deadline until = std::min(back.request.deadline, back.written_at + liveness_timeout_);
  ReplyReader& reader = reading.reader;
  std::array<char, 16 * 1024> buffer;
  while (replies.size() < back.request.count) {
    const auto left = until - SteadyClock::now();
    if (left <= SteadyClock::duration::zero()) return give_back(back);
    ssize_t n = 0;
    if (socket.blocking && left > kPollFrom) {
      // Until bytes come, or kRecvStep passes (EAGAIN: look again).
      n = ::recv(fd, buffer.data(), buffer.size(), 0);
    } else {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      const timespec wait{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      pollfd readable{fd, POLLIN, 0};
      const int ready = ::ppoll(&readable, 1, &wait, nullptr);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return give_back(back);
      n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    // Closed or failing: the I/O thread's own read says which.
    if (n <= 0) return give_back(back);
    reading.read.append(buffer.data(), static_cast<size_t>(n));
    if (!reader.feed(std::string_view(buffer.data(), static_cast<size_t>(n))))
      return give_back(back);
    while (replies.size() < back.request.count) {
      std::optional<Reply> reply = reader.next();
      if (!reply) break;
      replies.push_back(std::move(*reply));
    }
    if (reader.failed()) return give_back(back);
  }
  // More than its replies (a broken stream), or a demoted master's
  // READONLY (Sentinel): the I/O thread's to act on.
  const bool readonly = std::any_of(replies.begin(), replies.end(), [](const Reply& r) {
    return r.is_error() && r.text.compare(0, 8, "READONLY") == 0;
  });
  if (readonly || !reader.drained()) return give_back(back);
  g_inline_answers.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void DirectPath::open(bool woken) {
  if (!written_.empty()) return;  // a caller wrote meanwhile: its replies come first
  const int fd = stream_.socket().native_handle();
  if (sync_seen_ && !woken) {
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

std::optional<Deadline> DirectPath::next_watch(bool open) {
  const bool again = writes_ > 0 && open;
  writes_ = 0;
  watching_ = again;
  if (!again) return std::nullopt;
  watch_until_ = SteadyClock::now() + kDirectWatch;
  return watch_until_;
}

void DirectPath::reclaim(std::unique_lock<std::mutex>& lock, std::optional<Handback>& back) {
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

error_code DirectPath::rejoin() {
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

}  // namespace rl::redis
