// A sync caller alone on its connection writes its request and reads its
// reply itself: the I/O thread is not involved (no thread hop). Many sync
// callers at once still share the I/O thread's writes, count exactly, and
// each gets its own reply.
#include <atomic>
#include <set>
#include <thread>

#include "redis/connection.h"
#include "redis_env.h"

namespace rl::test {
namespace {

constexpr int64_t kLimit = 1000000;

TEST(SyncInline, ALoneSyncCallerReadsItsOwnReply) {
  auto store = open_redis("clock=manual");
  Limiter limiter(store, limiter_settings("sliding_log", std::to_string(kLimit) + "/h"));
  // The first call finds the connection in the I/O thread's hands; once it
  // is idle after a sync call, the socket is left to the next sync caller.
  // (Under script_mode=auto on a server without rl's Redis module the first
  // call's probe is sent again as Lua from the I/O thread: one more call to
  // hand the socket back.)
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  const uint64_t before = redis::sync_calls_answered_inline();
  constexpr int kCalls = 200;
  for (int n = 3; n <= kCalls + 2; ++n) {
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    ASSERT_EQ(o.verdict.remaining, kLimit - n);  // its own reply, counted once
  }
  EXPECT_EQ(redis::sync_calls_answered_inline() - before, static_cast<uint64_t>(kCalls));
}

TEST(SyncInline, ManySyncCallersCountExactlyAndGetTheirOwnReplies) {
  auto store = open_redis("clock=manual");
  Limiter limiter(store, limiter_settings("sliding_log", std::to_string(kLimit) + "/h"));
  constexpr int kThreads = 8;
  constexpr int kCalls = 200;
  std::atomic<int> mismatches{0};
  std::mutex mutex;
  std::set<int64_t> shared_remaining;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int64_t> mine;
      for (int64_t n = 1; n <= kCalls; ++n) {
        // Its own key: the n-th acquire leaves exactly kLimit - n, whoever
        // else shares the connection.
        const Outcome own = limiter.run(Op::acquire, "own-" + std::to_string(t), 1);
        if (own.code != Code::ok || own.verdict.remaining != kLimit - n) ++mismatches;
        // The shared key: each acquire leaves a different remainder.
        const Outcome shared = limiter.run(Op::acquire, "shared", 1);
        if (shared.code != Code::ok) ++mismatches;
        mine.push_back(shared.verdict.remaining);
      }
      std::lock_guard lock(mutex);
      for (int64_t r : mine) {
        if (!shared_remaining.insert(r).second) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, 0);
  ASSERT_EQ(shared_remaining.size(), static_cast<size_t>(kThreads * kCalls));
  EXPECT_EQ(*shared_remaining.begin(), kLimit - kThreads * kCalls);
  EXPECT_EQ(*shared_remaining.rbegin(), kLimit - 1);
  // Alone again: the next sync call is answered on its own thread.
  ASSERT_EQ(limiter.run(Op::acquire, "alone", 1).code, Code::ok);
  const uint64_t before = redis::sync_calls_answered_inline();
  const Outcome o = limiter.run(Op::acquire, "alone", 1);
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_EQ(o.verdict.remaining, kLimit - 2);
  EXPECT_EQ(redis::sync_calls_answered_inline() - before, 1u);
}

}  // namespace
}  // namespace rl::test
