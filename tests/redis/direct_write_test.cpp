// Callers that write their request to the socket themselves (when the
// connection has nothing else to write): replies still match their requests
// when they mix with the I/O thread's writes, a write the socket takes only
// part of is finished in order, deadlines shorter than the I/O thread's
// watch are kept, and close completes everything exactly once.
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "completions.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;
constexpr int64_t kLimit = 1000000;

// Remaining after each acquire, in the order the completions ran.
struct Remaining {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int64_t> values;
  std::vector<Code> failures;
  Completion completion() {
    return [this](Outcome&& o) {
      std::lock_guard lock(mutex);
      if (o.code == Code::ok)
        values.push_back(o.verdict.remaining);
      else
        failures.push_back(o.code);
      changed.notify_all();
    };
  }
  bool wait_for_count(size_t n) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, Ms(10000), [&] { return values.size() + failures.size() >= n; });
  }
};

TEST(DirectWrite, SyncAndAsyncCallersMixedGetTheirOwnReplies) {
  auto store = open_redis("clock=manual");
  Limiter limiter(store, limiter_settings("sliding_log", std::to_string(kLimit) + "/h"));
  constexpr int kSyncThreads = 3;
  constexpr int kSyncCalls = 300;
  std::atomic<int> mismatches{0};
  std::atomic<int> threads_done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kSyncThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread has its key: the n-th acquire on it leaves exactly
      // kLimit - n, whichever replies of other callers share the connection.
      for (int64_t n = 1; n <= kSyncCalls; ++n) {
        const Outcome o = limiter.run(Op::acquire, "sync-" + std::to_string(t), 1);
        if (o.code != Code::ok || o.verdict.remaining != kLimit - n) ++mismatches;
      }
      ++threads_done;
    });
  }
  // Meanwhile bursts of async calls on another key keep the I/O thread writing.
  Remaining async;
  size_t sent = 0;
  while (threads_done < kSyncThreads) {
    for (int i = 0; i < 25; ++i, ++sent)
      limiter.run_async(Call{Op::acquire, "async", 1}, async.completion());
    ASSERT_TRUE(async.wait_for_count(sent));
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, 0);
  ASSERT_TRUE(async.failures.empty());
  // One connection, replies in order: the async completions saw kLimit-1,
  // kLimit-2, ... in the order they were sent.
  for (size_t i = 0; i < async.values.size(); ++i)
    ASSERT_EQ(async.values[i], kLimit - 1 - static_cast<int64_t>(i)) << "completion " << i;
}

// Requests one thread sends leave in the order sent, so Redis decides them
// in that order: a caller may write to an idle socket itself, but not while
// the I/O thread holds requests it took from the inbox and has yet to
// write (those were sent first). Each call is its own request here (and no
// probe for rl's module, which goes again as Lua), so the n-th call sent
// must leave exactly kLimit - n. The Coalescer relies on this order for its
// second batch in flight.
TEST(DirectWrite, AsyncCallsOfOneThreadAreDecidedInTheOrderSent) {
  // Bursts, each sent while the I/O thread still runs the completions of
  // the last one's final replies (they do some work, as a busy machine's
  // would take long): the last reply leaves nothing awaited while the
  // burst's first calls wait in the inbox, and this thread sends on.
  constexpr size_t kBurst = 64;
  constexpr size_t kCalls = 300 * kBurst;
  // Before the store: its close still completes calls into them.
  std::vector<int64_t> remaining(kCalls, -1);
  std::atomic<size_t> finished{0};
  std::atomic<uint64_t> work{0};
  std::mutex mutex;
  std::condition_variable changed;
  auto store = open_redis("clock=manual&coalesce=off&script_mode=functions");
  Limiter limiter(store, limiter_settings("sliding_window", std::to_string(kLimit) + "/h"));
  const auto give_up = Clock::now() + Ms(30000);
  for (size_t n = 0; n < kCalls; ++n) {
    while (n % kBurst == 0 && finished + 2 < n) {
      ASSERT_LT(Clock::now(), give_up) << "calls before " << n << " not completed";
      std::this_thread::yield();
    }
    limiter.run_async(Call{Op::acquire, "k", 1}, [&, n](Outcome&& o) {
      remaining[n] = o.code == Code::ok ? o.verdict.remaining : -2;
      uint64_t x = n;
      for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005u + 1442695040888963407u;
      work += x;
      if (++finished == kCalls) {
        std::lock_guard lock(mutex);
        changed.notify_all();
      }
    });
  }
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, Ms(30000), [&] { return finished == kCalls; }));
  }
  for (size_t n = 0; n < kCalls; ++n)
    ASSERT_EQ(remaining[n], kLimit - 1 - static_cast<int64_t>(n)) << "call " << n;
}

TEST(DirectWrite, CloseWhileSyncAndAsyncCallersRaceCompletesEachOnce) {
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("gcra", "1000000/s"));
  std::atomic<int> sync_calls{0};
  std::atomic<int> sync_bad_codes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (;;) {
        const Outcome o = limiter.run(Op::acquire, "k" + std::to_string(t), 1);
        ++sync_calls;
        if (o.code == Code::shutdown) return;
        if (o.code != Code::ok) ++sync_bad_codes;
      }
    });
  }
  constexpr size_t kAsync = 3000;
  Completions async(kAsync);
  size_t sent = 0;
  // Close once the sync callers made some progress, with async calls in flight.
  for (; sent < kAsync && sync_calls < 300; ++sent)
    limiter.run_async(Call{Op::acquire, "a", 1}, async.for_call(sent));
  store->close();
  for (auto& t : threads) t.join();  // every sync caller got its shutdown
  EXPECT_EQ(sync_bad_codes, 0);
  {
    std::lock_guard lock(async.mutex);
    for (size_t i = 0; i < sent; ++i) {
      EXPECT_EQ(async.runs[i], 1) << "call " << i;
      EXPECT_TRUE(async.codes[i] == Code::ok || async.codes[i] == Code::shutdown) << "call " << i;
    }
  }
  std::this_thread::sleep_for(Ms(50));  // nothing may complete after close returned
  std::lock_guard lock(async.mutex);
  for (size_t i = 0; i < kAsync; ++i) EXPECT_EQ(async.runs[i], i < sent ? 1 : 0);
}

TEST(DirectWrite, DeadlineShorterThanTheWatchIsKept) {
  auto store = open_redis("timeout_ms=20&breaker_failures=0");
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  redis_cli("client pause 400 all");
  for (int i = 0; i < 3; ++i) {
    // The first call is written by its caller (nothing else was in flight).
    const auto start = Clock::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    EXPECT_EQ(o.code, Code::timeout) << o.message;
    EXPECT_LT(Clock::now() - start, Ms(20) + kSlack);
  }
  redis_cli("client unpause");
}

// A server on loopback that answers the handshake and one call, then reads
// nothing until resumed (so a large write fills the socket), then answers
// every FCALL or EVALSHA with a fixed verdict. It parses what it receives as RESP:
// bytes lost, repeated or out of order would fail the parse or the count.
class StallingServer {
 public:
  StallingServer() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    const int small = 4096;  // inherited by the accepted socket: fills fast
    setsockopt(listener_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(listener_, 1);
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~StallingServer() {
    resume();
    shutdown(listener_, SHUT_RDWR);
    if (const int c = client_; c >= 0) shutdown(c, SHUT_RDWR);
    thread_.join();
    close(listener_);
    if (client_ >= 0) close(client_);
  }
  int port() const { return port_; }
  void resume() {
    std::lock_guard lock(mutex_);
    resumed_ = true;
    changed_.notify_all();
  }
  size_t evalshas() const { return evalshas_; }
  bool protocol_error() const { return protocol_error_; }

 private:
  void serve() {
    client_ = accept(listener_, nullptr, nullptr);
    if (client_ < 0) return;
    redisReader* reader = redisReaderCreate();
    char buffer[16384];
    for (;;) {
      if (evalshas_ >= 1) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return resumed_; });
      }
      const ssize_t n = recv(client_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      redisReaderFeed(reader, buffer, static_cast<size_t>(n));
      std::string replies;
      for (;;) {
        void* raw = nullptr;
        if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
          protocol_error_ = true;
          break;
        }
        if (raw == nullptr) break;
        const auto* command = static_cast<redisReply*>(raw);
        const std::string name =
            command->type == REDIS_REPLY_ARRAY && command->elements > 0
                ? std::string(command->element[0]->str, command->element[0]->len)
                : "";
        if (name == "PING") {
          replies += "+PONG\r\n";
        } else if (name == "FCALL" || name == "EVALSHA") {
          ++evalshas_;
          replies += "*6\r\n:1\r\n:1000\r\n:999\r\n:0\r\n:0\r\n:0\r\n";  // a script reply
        } else {
          protocol_error_ = true;
        }
        freeReplyObject(raw);
      }
      if (protocol_error_) break;
      if (send(client_, replies.data(), replies.size(), MSG_NOSIGNAL) < 0) break;
    }
    redisReaderFree(reader);
  }

  int listener_ = -1;
  std::atomic<int> client_{-1};
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool resumed_ = false;
  std::atomic<size_t> evalshas_{0};
  std::atomic<bool> protocol_error_{false};
};

TEST(DirectWrite, AWriteTheSocketTakesOnlyInPartIsFinishedInOrder) {
  StallingServer server;
  auto store =
      open_store("redis://127.0.0.1:" + std::to_string(server.port()) +
                     // one command per call, counted; the fake speaks FCALL/EVALSHA only, so no
                     // probe for rl's Redis module (script_mode=auto's first RL.ACQUIRE)
                     "?timeout_ms=60000&breaker_failures=0&coalesce=off&script_mode=functions",
                 {});
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "first", 1).code, Code::ok);

  // Idle connection, stalled server: the batch is written by its caller, and
  // megabytes do not fit in the socket.
  constexpr size_t kBatch = 20000;
  std::vector<Call> calls;
  for (size_t i = 0; i < kBatch; ++i)
    calls.push_back(Call{Op::acquire, std::string(200, 'k') + std::to_string(i), 1});
  std::mutex mutex;
  std::condition_variable changed;
  int batch_runs = 0;
  Outcome batch_failure;
  std::vector<Outcome> batch_outcomes;
  limiter.acquire_batch_async(std::move(calls), [&](Outcome&& f, std::vector<Outcome>&& out) {
    std::lock_guard lock(mutex);
    ++batch_runs;
    batch_failure = std::move(f);
    batch_outcomes = std::move(out);
    changed.notify_all();
  });
  // Queued behind the batch's rest.
  Completions after(10);
  for (size_t i = 0; i < 10; ++i)
    limiter.run_async(Call{Op::acquire, "after", 1}, after.for_call(i));

  server.resume();
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, Ms(30000), [&] { return batch_runs > 0; }));
    EXPECT_EQ(batch_failure.code, Code::ok) << batch_failure.message;
    ASSERT_EQ(batch_outcomes.size(), kBatch);
    for (const Outcome& o : batch_outcomes) ASSERT_EQ(o.code, Code::ok) << o.message;
  }
  ASSERT_TRUE(after.wait_all(Ms(30000)));
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(after.runs[i], 1);
    EXPECT_EQ(after.codes[i], Code::ok);
  }
  EXPECT_FALSE(server.protocol_error());
  EXPECT_EQ(server.evalshas(), 1 + kBatch + 10);
  store->close();
  EXPECT_EQ(batch_runs, 1);
}

}  // namespace
}  // namespace rl::test
