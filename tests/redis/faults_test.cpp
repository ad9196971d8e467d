// Faults: a restarted server, a paused server, a
// server that is not there, and closing a store with calls in flight.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "completions.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

TEST(Restart, CallsFailWithinTheDeadlineThenRecoverWithinASecond) {
  // Without the circuit breaker: the 5 failures below would open it, and its
  // cool-down, not the reconnect, would then bound the recovery
  // (failover_test.cpp tests the breaker).
  auto store = open_redis("timeout_ms=200&reconnect_max_ms=200&breaker_failures=0");
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);

  redis_cli("shutdown nosave");
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    const auto took = Clock::now() - start;
    EXPECT_TRUE(o.code == Code::backend_unavailable || o.code == Code::timeout) << o.message;
    EXPECT_NE(o.message.find("127.0.0.1:" + env_or_fail("RL_TEST_REDIS_PORT")), std::string::npos)
        << o.message;
    EXPECT_LT(took, Ms(200) + kSlack);
  }

  shell("bash " + env_or_fail("RL_TEST_REDIS_DIR") + "/start");
  // Wait for the server process itself (not for rl): it answers PING.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (redis_cli("ping").find("PONG") == std::string::npos && Clock::now() < deadline) {
    std::this_thread::sleep_for(Ms(10));
  }
  const auto back = Clock::now();
  Outcome o;
  while (Clock::now() - back < std::chrono::seconds(2)) {
    o = limiter.run(Op::acquire, "k", 1);
    if (o.code == Code::ok) break;
    std::this_thread::sleep_for(Ms(20));
  }
  EXPECT_EQ(o.code, Code::ok) << o.message;
  EXPECT_LT(Clock::now() - back, Ms(1000)) << "no success within a second of Redis being back";
}

TEST(SlowRedis, EveryCallReturnsWithinItsTimeoutAndCloseStillWorks) {
  // Without the circuit breaker, which would answer at once after 5 timeouts
  // (failover_test.cpp tests that).
  auto store = open_redis("timeout_ms=100&breaker_failures=0");
  Limiter limiter(store, limiter_settings("token_bucket", "1000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  redis_cli("client pause 700 all");
  const auto paused_at = Clock::now();

  // Async calls in flight while sync ones time out one after another.
  Completions async_calls(50);
  for (size_t i = 0; i < 50; ++i)
    limiter.run_async(Call{Op::acquire, "k", 1}, async_calls.for_call(i));
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    EXPECT_EQ(o.code, Code::timeout) << o.message;
    EXPECT_NE(o.message.find("timeout_ms=100"), std::string::npos) << o.message;
    EXPECT_LT(Clock::now() - start, Ms(100) + kSlack);
  }
  EXPECT_TRUE(async_calls.wait_all(Ms(100) + kSlack));
  for (Code c : async_calls.codes) EXPECT_EQ(c, Code::timeout);

  // Close while more calls wait on the paused server: each completes once,
  // with shutdown, and close returns long before the pause ends.
  Completions pending(20);
  for (size_t i = 0; i < 20; ++i) limiter.run_async(Call{Op::acquire, "k", 1}, pending.for_call(i));
  store->close();
  EXPECT_LT(Clock::now() - paused_at, Ms(600)) << "close waited for the server";
  ASSERT_EQ(pending.finished(), 20u) << "close returned before every call completed";
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(pending.runs[i], 1);
    EXPECT_EQ(pending.codes[i], Code::shutdown);
  }
  EXPECT_THROW(limiter.run_async(Call{Op::acquire, "k", 1}, [](Outcome&&) {}), Error);
  EXPECT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::shutdown);
  std::this_thread::sleep_for(Ms(50));  // nothing may complete after close returned
  for (int r : async_calls.runs) EXPECT_EQ(r, 1);
  for (int r : pending.runs) EXPECT_EQ(r, 1);
  redis_cli("client unpause");
}

TEST(ServerDown, OpenSucceedsAndCallsFailFastNamingTheServer) {
  const std::string port = "1";  // nobody listens there
  auto store =
      open_store("redis://127.0.0.1:" + port + "?timeout_ms=300&connect_timeout_ms=200", {});
  Limiter limiter(store, limiter_settings("gcra", "1/s"));
  const auto start = Clock::now();
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
  EXPECT_NE(o.message.find("redis 127.0.0.1:1"), std::string::npos) << o.message;
  EXPECT_LT(Clock::now() - start, Ms(300) + kSlack);
}

TEST(Close, FromInsideACallbackCompletesTheRestAndReturns) {
  auto store = open_redis();
  auto limiter = std::make_shared<Limiter>(store, limiter_settings("gcra", "1000/s"));
  redis_cli("client pause 300 all");
  Completions calls(10);
  limiter->run_async(Call{Op::acquire, "k", 1}, [&, store](Outcome&& o) {
    store->close();  // on the I/O thread: may not wait for itself
    calls.for_call(0)(std::move(o));
  });
  for (size_t i = 1; i < 10; ++i) limiter->run_async(Call{Op::acquire, "k", 1}, calls.for_call(i));
  EXPECT_TRUE(calls.wait_all(Ms(2000)));
  for (int r : calls.runs) EXPECT_EQ(r, 1);
  redis_cli("client unpause");
}

}  // namespace
}  // namespace rl::test
