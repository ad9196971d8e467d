// On Redis: a request's own deadline (rl_request.timeout_us) reaches the
// connection, the deciding limit's index comes back from the scripts, and
// acquire_wait's timers complete once each, by admission or by close.
#include <condition_variable>
#include <mutex>

#include "redis_env.h"

namespace rl::test {
namespace {

using SteadyClock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// Timeouts fire on the I/O thread; sanitizers and CPU steal need slack.
constexpr Ms kSlack{150};

// Pauses the test server for its lifetime (at most `ms`).
struct PausedRedis {
  explicit PausedRedis(int ms) { redis_cli("client pause " + std::to_string(ms) + " all"); }
  ~PausedRedis() { redis_cli("client unpause"); }
};

struct Results {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int> runs;
  std::vector<Outcome> outcomes;

  explicit Results(size_t n) : runs(n, 0), outcomes(n) {}
  Completion for_call(size_t i) {
    return [this, i](Outcome&& o) {
      std::lock_guard lock(mutex);
      ++runs[i];
      outcomes[i] = std::move(o);
      changed.notify_all();
    };
  }
  bool wait_all(Ms timeout) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [&] {
      for (int r : runs)
        if (r == 0) return false;
      return true;
    });
  }
};

TEST(RequestDeadline, AShorterRequestTimeoutEndsTheCallByItsOwnDeadline) {
  auto store = open_redis("timeout_ms=2000");
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  PausedRedis paused(1500);

  auto start = SteadyClock::now();
  const Outcome sync = limiter.run(Op::acquire, "k", 1, 100000);
  EXPECT_EQ(sync.code, Code::timeout) << sync.message;
  EXPECT_NE(sync.message.find("timeout_us=100000"), std::string::npos) << sync.message;
  EXPECT_LT(SteadyClock::now() - start, Ms(100) + kSlack) << "the store's 2 s was used";
  EXPECT_GE(SteadyClock::now() - start, Ms(100));

  Results async(1);
  start = SteadyClock::now();
  limiter.run_async(Call{Op::acquire, "k", 1, 100000}, async.for_call(0));
  ASSERT_TRUE(async.wait_all(Ms(100) + kSlack)) << "async call outlived its deadline";
  EXPECT_EQ(async.outcomes[0].code, Code::timeout);

  // A batch travels as one: its earliest deadline applies to all of it.
  start = SteadyClock::now();
  EXPECT_THROW(
      limiter.acquire_batch({Call{Op::acquire, "a", 1, 0}, Call{Op::acquire, "b", 1, 100000}}),
      Error);
  EXPECT_LT(SteadyClock::now() - start, Ms(100) + kSlack);
}

TEST(RequestDeadline, ALongerRequestTimeoutDoesNotExtendTheStores) {
  auto store = open_redis("timeout_ms=100");
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  PausedRedis paused(1000);
  const auto start = SteadyClock::now();
  const Outcome o = limiter.run(Op::acquire, "k", 1, 5000000);
  EXPECT_EQ(o.code, Code::timeout);
  EXPECT_NE(o.message.find("timeout_ms=100"), std::string::npos) << o.message;
  EXPECT_LT(SteadyClock::now() - start, Ms(100) + kSlack);
}

TEST(RequestDeadline, NegativeIsRefusedBeforeRedis) {
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("gcra", "10/s"));
  EXPECT_THROW(limiter.run(Op::acquire, "k", 1, -1), Error);
}

TEST(LimitIndex, RedisReportsTheDecidingLimitAsMemoryDoes) {
  for (const char* algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm);
    auto redis = open_redis("clock=manual");
    auto memory = open_store("memory://?clock=manual", {});
    Limiter on_redis(redis, limiter_settings(algorithm, "100/s, 100/h"));
    Limiter on_memory(memory, limiter_settings(algorithm, "100/s, 100/h"));
    for (Limiter* l : {&on_redis, &on_memory}) {
      const Outcome first = l->run(Op::acquire, "k", 100);
      ASSERT_EQ(first.code, Code::ok) << first.message;
      EXPECT_EQ(first.verdict.limit_index, 0) << "a tie goes to the first limit";
    }
    // 2 s: 100/s is full again in every algorithm, 100/h in none.
    manual_clock(*redis).advance(2000000);
    manual_clock(*memory).advance(2000000);
    const Outcome r = on_redis.run(Op::acquire, "k", 1);
    const Outcome m = on_memory.run(Op::acquire, "k", 1);
    ASSERT_EQ(r.code, Code::ok) << r.message;
    EXPECT_FALSE(r.verdict.allowed);
    EXPECT_EQ(r.verdict.limit, 100);
    EXPECT_EQ(r.verdict.limit_index, 1) << "100/h decided";
    EXPECT_EQ(m.verdict.limit_index, 1);
  }
}

TEST(AcquireWait, ATimerRetriesOnRedisUntilAdmitted) {
  auto store = open_redis();
  Settings settings = limiter_settings("gcra", "20/s");
  settings.set("burst", "1");
  Limiter limiter(store, settings);
  ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  Results results(1);
  limiter.acquire_wait_async(Call{Op::acquire, "k", 1}, 1000000, results.for_call(0));
  ASSERT_TRUE(results.wait_all(Ms(1000)));
  EXPECT_EQ(results.outcomes[0].code, Code::ok) << results.outcomes[0].message;
  EXPECT_TRUE(results.outcomes[0].verdict.allowed);
}

TEST(AcquireWait, CloseCompletesEveryWaitingCallOnceWithShutdown) {
  constexpr size_t kWaits = 200;
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("gcra", "1/h"));
  ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  Results results(kWaits);
  for (size_t i = 0; i < kWaits; ++i)
    limiter.acquire_wait_async(Call{Op::acquire, "k", 1}, 7200000000, results.for_call(i));
  store->close();
  for (size_t i = 0; i < kWaits; ++i) {
    ASSERT_EQ(results.runs[i], 1) << "wait " << i << " not completed once by close";
    EXPECT_EQ(results.outcomes[i].code, Code::shutdown) << results.outcomes[i].message;
  }
  EXPECT_THROW(limiter.acquire_wait_async(Call{Op::acquire, "k", 1}, 0, [](Outcome&&) {}), Error);
}

}  // namespace
}  // namespace rl::test
