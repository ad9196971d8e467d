// A connection that stops answering without closing (half-open): calls fail
// within their deadline, the connection is presumed dead after
// liveness_timeout_ms with replies awaited, dropped and reconnected, and the
// requests it holds stay bounded. Through a FaultProxy in front of the
// server of scripts/with-redis.
#include <fstream>
#include <iostream>
#include <thread>

#include "completions.h"
#include "fault_proxy.h"
#include "redis/connection.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

constexpr Ms kTimeout{200};
constexpr Ms kLiveness{500};
constexpr Ms kConnectTimeout{300};
constexpr Ms kReconnectMax{100};

// The connection's own recovery, without the circuit breaker in front of it
// (failover_test.cpp tests the breaker).
std::shared_ptr<Store> open_through(const FaultProxy& proxy, const std::string& extra = "") {
  return open_store(
      "redis://127.0.0.1:" + std::to_string(proxy.port()) + "?prefix=" + unique_prefix() +
          "&breaker_failures=0" + "&timeout_ms=" + std::to_string(kTimeout.count()) +
          "&liveness_timeout_ms=" + std::to_string(kLiveness.count()) +
          "&connect_timeout_ms=" + std::to_string(kConnectTimeout.count()) + "&reconnect_max_ms=" +
          std::to_string(kReconnectMax.count()) + (extra.empty() ? "" : "&" + extra),
      {});
}

int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<Ms>(Clock::now() - start).count();
}

// What sync calls saw, one after another, until one succeeded.
struct UntilOk {
  bool ok = false;
  int64_t ok_after_ms = -1;    // from `start`
  int64_t dead_after_ms = -1;  // first "presumed dead" failure, from `start`
  int64_t longest_call_ms = 0;
  int failures = 0;
  int successes = 0;  // 1 once ok
};

UntilOk call_until_ok(Limiter& limiter, Clock::time_point start, Ms give_up_after) {
  UntilOk r;
  while (Clock::now() - start < give_up_after) {
    const auto call_start = Clock::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    r.longest_call_ms = std::max(r.longest_call_ms, ms_since(call_start));
    if (o.code == Code::ok) {
      r.ok = true;
      r.successes = 1;
      r.ok_after_ms = ms_since(start);
      return r;
    }
    ++r.failures;
    EXPECT_TRUE(o.code == Code::timeout || o.code == Code::backend_unavailable) << o.message;
    if (r.dead_after_ms < 0 && o.message.find("presumed dead") != std::string::npos)
      r.dead_after_ms = ms_since(start);
    // Between reconnect attempts calls fail at once: do not spin on them.
    if (o.code == Code::backend_unavailable) std::this_thread::sleep_for(Ms(5));
  }
  return r;
}

// The process's resident set, for the figure in the output.
int64_t rss_kib() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

TEST(HalfOpen, DeadConnectionIsDroppedWithinTheBoundAndReconnected) {
  FaultProxy proxy(std::stoi(env_or_fail("RL_TEST_REDIS_PORT")));
  auto store = open_through(proxy);
  Limiter limiter(store, limiter_settings("gcra", "100000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  ASSERT_EQ(proxy.accepted(), 1);

  // The open connection goes silent; a new one would work.
  proxy.go_half_open();
  const auto start = Clock::now();
  const UntilOk r = call_until_ok(limiter, start, Ms(5000));
  std::cout << "[figure] half-open: longest failed call " << r.longest_call_ms
            << " ms (timeout_ms=" << kTimeout.count() << "), presumed dead after "
            << r.dead_after_ms << " ms (liveness_timeout_ms=" << kLiveness.count()
            << "), first success after " << r.ok_after_ms << " ms\n";
  ASSERT_TRUE(r.ok) << "never reconnected";
  EXPECT_LE(r.longest_call_ms, (kTimeout + kSlack).count());
  EXPECT_GE(r.dead_after_ms, kLiveness.count() - kTimeout.count());
  EXPECT_LE(r.dead_after_ms, (kLiveness + kSlack).count());
  // Detection, one backoff, one connect attempt.
  EXPECT_LE(r.ok_after_ms, (kLiveness + kReconnectMax + kConnectTimeout + kSlack).count());
  EXPECT_GE(proxy.accepted(), 2) << "reconnected through the proxy";
}

TEST(HalfOpen, RequestsHeldStayBoundedUnderLoadAndRecoveryFollowsTheServer) {
  FaultProxy proxy(std::stoi(env_or_fail("RL_TEST_REDIS_PORT")));
  auto store = open_through(proxy);
  Limiter limiter(store, limiter_settings("gcra", "100000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);

  // Nothing answers, old connection or new, for 3 s of 5,000 async calls/s.
  proxy.set_new_connections_half_open(true);
  proxy.go_half_open();
  constexpr int kPerMs = 5;
  constexpr int kRunMs = 3000;
  Completions calls(kPerMs * kRunMs);
  std::vector<Clock::time_point> issued_at(calls.runs.size());
  const int64_t rss_before = rss_kib();
  size_t held_peak = 0;
  const auto start = Clock::now();
  for (int tick = 0; tick < kRunMs; ++tick) {
    for (int i = 0; i < kPerMs; ++i) {
      const size_t n = static_cast<size_t>(tick * kPerMs + i);
      issued_at[n] = Clock::now();
      limiter.run_async(Call{Op::acquire, "k", 1}, calls.for_call(n));
    }
    held_peak = std::max(held_peak, redis::requests_held());
    std::this_thread::sleep_until(start + Ms(tick + 1));  // paces the load only
  }
  ASSERT_TRUE(calls.wait_all(kTimeout + kSlack));
  const int64_t rss_growth = rss_kib() - rss_before;

  int64_t latest_ms = 0;
  for (size_t n = 0; n < calls.runs.size(); ++n) {
    EXPECT_EQ(calls.runs[n], 1);
    EXPECT_TRUE(calls.codes[n] == Code::timeout || calls.codes[n] == Code::backend_unavailable);
    latest_ms = std::max<int64_t>(
        latest_ms, std::chrono::duration_cast<Ms>(calls.finished_at[n] - issued_at[n]).count());
  }
  std::cout << "[figure] " << calls.runs.size() << " calls in " << kRunMs
            << " ms of silence: slowest completion " << latest_ms
            << " ms (timeout_ms=" << kTimeout.count() << "), peak requests held " << held_peak
            << ", RSS growth " << rss_growth << " KiB\n";
  EXPECT_LE(latest_ms, (kTimeout + kSlack).count());
  // A connection is dropped after liveness_timeout_ms, so at most that long
  // of the load is held (2,500 here), never the whole run (15,000).
  EXPECT_LE(held_peak, static_cast<size_t>(kPerMs * (kLiveness + kTimeout).count()));

  // The server answers again: rl uses it within one connect attempt and one
  // backoff.
  proxy.set_new_connections_half_open(false);
  const auto back = Clock::now();
  const UntilOk r = call_until_ok(limiter, back, Ms(5000));
  std::cout << "[figure] first success " << r.ok_after_ms
            << " ms after the proxy forwarded again\n";
  ASSERT_TRUE(r.ok);
  EXPECT_LE(r.ok_after_ms, (kConnectTimeout + kReconnectMax + kTimeout + kSlack).count());
  EXPECT_EQ(redis::requests_held(), 0u);
}

TEST(HalfOpen, RequestsWrittenBeforeTheDropFailAndAreNeverResent) {
  FaultProxy proxy(std::stoi(env_or_fail("RL_TEST_REDIS_PORT")));
  auto store = open_through(proxy, "clock=manual");
  Limiter limiter(store, limiter_settings("sliding_log", "100000/h"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);

  // Requests still reach Redis and run there; their replies are lost.
  proxy.go_half_open(FaultProxy::Direction::replies);
  constexpr size_t kLost = 50;
  Completions lost(kLost);
  for (size_t i = 0; i < kLost; ++i) limiter.run_async(Call{Op::acquire, "k", 1}, lost.for_call(i));
  ASSERT_TRUE(lost.wait_all(kTimeout + kSlack));
  for (size_t i = 0; i < kLost; ++i) {
    EXPECT_EQ(lost.runs[i], 1);
    EXPECT_EQ(lost.codes[i], Code::timeout);
  }

  // No call meanwhile (it would be written to the dead connection too):
  // the connection drops what it holds when it is presumed dead.
  const auto lost_at = Clock::now();
  while (redis::requests_held() > 0 && Clock::now() - lost_at < kLiveness + Ms(1000))
    std::this_thread::sleep_for(Ms(5));
  ASSERT_EQ(redis::requests_held(), 0u);

  const UntilOk r = call_until_ok(limiter, Clock::now(), Ms(5000));
  ASSERT_TRUE(r.ok);
  EXPECT_GE(proxy.accepted(), 2);
  // Redis counted each lost request once: none was sent again on the new
  // connection.
  EXPECT_EQ(limiter.run(Op::peek, "k", 0).verdict.remaining,
            100000 - 1 - static_cast<int64_t>(kLost) - r.successes);
}

TEST(HalfOpen, AResetFailsWhatWasInFlightAtOnceAndTheNextCallReconnects) {
  FaultProxy proxy(std::stoi(env_or_fail("RL_TEST_REDIS_PORT")));
  auto store = open_through(proxy);
  Limiter limiter(store, limiter_settings("gcra", "100000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  proxy.set_delay(Ms(100));  // keeps the next calls in flight
  Completions calls(10);
  for (size_t i = 0; i < 10; ++i) limiter.run_async(Call{Op::acquire, "k", 1}, calls.for_call(i));
  const auto reset_at = Clock::now();
  proxy.reset();
  ASSERT_TRUE(calls.wait_all(kTimeout + kSlack));
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(calls.runs[i], 1);
    // Each either made it before the reset or failed with it, not by timing out.
    EXPECT_TRUE(calls.codes[i] == Code::ok || calls.codes[i] == Code::backend_unavailable);
    EXPECT_LT(calls.finished_at[i] - reset_at, kTimeout);
  }
  proxy.set_delay(Ms(0));
  const UntilOk r = call_until_ok(limiter, Clock::now(), Ms(5000));
  EXPECT_TRUE(r.ok);
  EXPECT_GE(proxy.accepted(), 2);
}

}  // namespace
}  // namespace rl::test
