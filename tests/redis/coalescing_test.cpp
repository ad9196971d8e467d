// Coalescing (core/redis/coalescer.h): calls that wait behind one in flight
// leave as one FCALL of the batch function, at most two requests in flight
// per node. Each is decided exactly as if sent alone, in the order it was
// made; the count stays exact under concurrency and under failures with
// two batches in flight; one call's error stays its own.
#include <atomic>
#include <random>
#include <thread>

#include "burst_check.h"
#include "completions.h"
#include "fault_proxy.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Ms = std::chrono::milliseconds;

// Commands that decide: FCALLs, or rl's module's where it is loaded.
int64_t fcalls() {
  const std::string stats = redis_cli("info commandstats");
  int64_t calls = 0;
  for (const char* command : {"fcall", "rl.acquire", "rl.batch", "rl.many"}) {
    const std::string tag = std::string("cmdstat_") + command + ":calls=";
    const size_t at = stats.find(tag);
    if (at != std::string::npos) calls += std::stoll(stats.substr(at + tag.size()));
  }
  return calls;
}

// Bursts of async calls made back to back (so all but the first wait and
// leave as a batch) decide what the memory store decides for the same
// calls one by one.
TEST(Coalescing, BatchedCallsDecideAsTheMemoryStoreInOrder) {
  for (const char* algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm);
    Settings settings = limiter_settings(algorithm, "20/s, 50/10s");
    auto memory = open_store("memory://?clock=manual", {});
    auto redis = open_redis("clock=manual");
    Limiter on_memory(memory, settings);
    Limiter on_redis(redis, settings);
    manual_clock(*memory).set(1'700'000'000'000'000);
    manual_clock(*redis).set(1'700'000'000'000'000);
    std::mt19937_64 random(42);
    const int64_t fcalls_before = fcalls();
    int calls_made = 0;
    for (int burst = 0; burst < 30; ++burst) {
      std::vector<Call> calls;
      for (int i = 0; i < 40; ++i) {
        const int pick = static_cast<int>(random() % 100);
        const Op op = pick < 75   ? Op::acquire
                      : pick < 88 ? Op::peek
                      : pick < 98 ? Op::refund
                                  : Op::reset;
        const int64_t cost = op == Op::reset ? 0 : 1 + static_cast<int64_t>(random() % 4);
        calls.push_back(Call{op, "k" + std::to_string(random() % 3), cost});
      }
      SCOPED_TRACE("burst " + std::to_string(burst));
      expect_burst_decides_as_memory(on_redis, on_memory, calls);
      if (::testing::Test::HasFatalFailure()) return;
      calls_made += static_cast<int>(calls.size());
      const int64_t step = static_cast<int64_t>(random() % 700'000);
      manual_clock(*memory).advance(step);
      manual_clock(*redis).advance(step);
    }
    // Batches happened: fewer commands than calls.
    EXPECT_LT(fcalls() - fcalls_before, calls_made);
  }
}

TEST(Coalescing, ThreadsOnOneKeyAdmitExactlyTheLimit) {
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("sliding_window", "1000/h"));
  constexpr int kThreads = 8, kPerThread = 400;
  Completions done(kThreads * kPerThread);
  std::atomic<int> admitted{0};
  const int64_t fcalls_before = fcalls();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const size_t n = static_cast<size_t>(t * kPerThread + i);
        limiter.run_async(Call{Op::acquire, "hot", 1},
                          [&, record = done.for_call(n)](Outcome&& o) mutable {
                            if (o.code == Code::ok && o.verdict.allowed) ++admitted;
                            record(std::move(o));
                          });
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(done.wait_all(Ms(30000)));
  for (size_t i = 0; i < done.runs.size(); ++i) {
    ASSERT_EQ(done.runs[i], 1);
    ASSERT_EQ(done.codes[i], Code::ok);
  }
  EXPECT_EQ(admitted, 1000);
  EXPECT_EQ(limiter.run(Op::peek, "hot", 0).verdict.remaining, 0);
  const int64_t commands = fcalls() - fcalls_before;
  EXPECT_LT(commands, kThreads * kPerThread / 2);
  std::printf("[coalescing] %d calls in %lld FCALLs\n", kThreads * kPerThread,
              static_cast<long long>(commands));
}

// Sync callers (a thread each, as the Java binding's) share batches and are
// woken from them as a tree (core/sync_wake.h): each gets its own decision,
// once. Each thread's own key shows its calls' order; the hot key admits
// exactly its limit.
TEST(Coalescing, SyncThreadsEachGetTheirOwnDecision) {
  auto store = open_redis();
  // sliding_log: remaining is the exact count, whatever the clock does.
  Limiter limiter(store, limiter_settings("sliding_log", "1000/h"));
  constexpr int kThreads = 64, kRounds = 20;
  std::atomic<int> admitted{0}, wrong{0};
  const int64_t fcalls_before = fcalls();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = "own" + std::to_string(t);
      for (int i = 0; i < kRounds; ++i) {
        const Outcome mine = limiter.run(Op::acquire, own, 1);
        if (mine.code != Code::ok || mine.verdict.remaining != 1000 - (i + 1)) ++wrong;
        const Outcome hot = limiter.run(Op::acquire, "hot", 1);
        if (hot.code != Code::ok) ++wrong;
        if (hot.code == Code::ok && hot.verdict.allowed) ++admitted;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(admitted, 1000);
  EXPECT_EQ(limiter.run(Op::peek, "hot", 0).verdict.remaining, 0);
  EXPECT_LT(fcalls() - fcalls_before, 2 * kThreads * kRounds);
}

// On Redis's clock a batch carries the usual call (cost 1) as its name and
// limits alone and any other (another cost, a peek) with all its arguments
// (lua/library.lua): both in one batch, each counted exactly.
TEST(Coalescing, UsualAndFullCallsInOneBatchCountExactly) {
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("sliding_log", "1000/h"));
  constexpr int kCalls = 300;
  Completions done(kCalls);
  int64_t taken[3] = {0, 0, 0};
  const int64_t fcalls_before = fcalls();
  for (int i = 0; i < kCalls; ++i) {
    const std::string key = "mixed" + std::to_string(i % 3);
    const Op op = i % 5 == 4 ? Op::peek : Op::acquire;
    const int64_t cost = op == Op::peek ? 0 : i % 2 == 0 ? 1 : 3;
    taken[i % 3] += cost;
    limiter.run_async(Call{op, key, cost}, done.for_call(static_cast<size_t>(i)));
  }
  ASSERT_TRUE(done.wait_all(Ms(10000)));
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_EQ(done.runs[static_cast<size_t>(i)], 1);
    ASSERT_EQ(done.codes[static_cast<size_t>(i)], Code::ok) << "call " << i;
  }
  EXPECT_LT(fcalls() - fcalls_before, kCalls);
  for (int k = 0; k < 3; ++k) {
    const Outcome o = limiter.run(Op::peek, "mixed" + std::to_string(k), 0);
    EXPECT_EQ(o.verdict.remaining, 1000 - taken[k]) << "key " << k;
  }
}

TEST(Coalescing, OneCallsErrorStaysItsOwn) {
  const std::string prefix = unique_prefix();
  auto store = open_store(redis_url("", prefix), {});
  // Per hour: the key must outlive the scan below (its TTL ends when it is idle).
  Limiter limiter(store, limiter_settings("gcra", "100/h"));
  ASSERT_TRUE(limiter.run(Op::acquire, "bad", 1).verdict.allowed);
  // The key of "bad" now holds a hash: GET on it fails with WRONGTYPE.
  const std::string key = redis_cli("--scan --pattern '" + prefix + "*bad*'");
  ASSERT_FALSE(key.empty());
  const std::string name = key.substr(0, key.find('\n'));
  redis_cli("del '" + name + "'");
  redis_cli("hset '" + name + "' f v");
  constexpr int kRounds = 20;
  Completions done(3 * kRounds);
  for (int i = 0; i < kRounds; ++i) {
    limiter.run_async(Call{Op::acquire, "a", 1}, done.for_call(3 * i));
    limiter.run_async(Call{Op::acquire, "bad", 1}, done.for_call(3 * i + 1));
    limiter.run_async(Call{Op::acquire, "c", 1}, done.for_call(3 * i + 2));
  }
  ASSERT_TRUE(done.wait_all(Ms(10000)));
  for (int i = 0; i < kRounds; ++i) {
    EXPECT_EQ(done.codes[3 * i], Code::ok);
    EXPECT_EQ(done.codes[3 * i + 1], Code::backend_error);
    EXPECT_EQ(done.codes[3 * i + 2], Code::ok);
  }
  // Each of the others counted once, whatever batch it was in.
  EXPECT_EQ(limiter.run(Op::peek, "a", 0).verdict.remaining, 100 - kRounds);
  EXPECT_EQ(limiter.run(Op::peek, "c", 0).verdict.remaining, 100 - kRounds);
}

// Through a proxy that holds every chunk 300 ms, calls made at once leave
// as: the first alone, a second request of kMinSecond (4) calls while it is
// in flight, and the other 16 once its reply came (two in flight). One
// limiter on one sliding_log key: the n-th call sees 1000 - n remaining.
constexpr int kCallsAtOnce = 21;
constexpr Ms kHeld{300};

struct AtOnce {
  FaultProxy proxy{std::stoi(env_or_fail("RL_TEST_REDIS_PORT"))};
  const std::string url = "redis://127.0.0.1:" + std::to_string(proxy.port()) +
                          "?prefix=" + unique_prefix() + "&breaker_failures=0";
  std::shared_ptr<Store> store;
  std::unique_ptr<Limiter> limiter;
  Completions done{kCallsAtOnce};
  std::vector<Outcome> got = std::vector<Outcome>(kCallsAtOnce);

  explicit AtOnce(const std::string& extra) {
    store = open_store(url + "&" + extra, {});
    limiter = std::make_unique<Limiter>(store, limiter_settings("sliding_log", "1000/h"));
    // Connected, the module looked for, the library loaded.
    EXPECT_EQ(limiter->run(Op::acquire, "warm-up", 1).code, Code::ok);
    proxy.set_delay(kHeld);
  }
  void make_calls() {
    for (int i = 0; i < kCallsAtOnce; ++i) {
      limiter->run_async(
          Call{Op::acquire, "k", 1},
          [this, i, record = done.for_call(static_cast<size_t>(i))](Outcome&& o) mutable {
            got[static_cast<size_t>(i)] = o;
            record(std::move(o));
          });
    }
  }
  // Each call completed exactly once; how many were decided by Redis.
  int completed_once() {
    EXPECT_TRUE(done.wait_all(Ms(20000)));
    int ok = 0;
    for (int i = 0; i < kCallsAtOnce; ++i) {
      EXPECT_EQ(done.runs[static_cast<size_t>(i)], 1) << "call " << i;
      if (done.codes[static_cast<size_t>(i)] == Code::ok) ++ok;
    }
    return ok;
  }
  // What "k" has left once every call sent so far reached Redis: a peek
  // from another store through the proxy, held as long, so after them.
  int64_t remaining() {
    auto later = open_store(url + "&timeout_ms=10000&connect_timeout_ms=10000", {});
    const Outcome o =
        Limiter(later, limiter_settings("sliding_log", "1000/h")).run(Op::peek, "k", 0);
    EXPECT_EQ(o.code, Code::ok);
    return o.verdict.remaining;
  }
};

TEST(Coalescing, TwoBatchesInFlightDecideInOrder) {
  AtOnce run("timeout_ms=10000");
  const int64_t fcalls_before = fcalls();
  run.make_calls();
  ASSERT_EQ(run.completed_once(), kCallsAtOnce);
  for (int i = 0; i < kCallsAtOnce; ++i) {
    EXPECT_EQ(run.got[static_cast<size_t>(i)].verdict.remaining, 1000 - (i + 1)) << "call " << i;
  }
  // Alone, 4 while it was in flight, 16 after its reply.
  EXPECT_EQ(fcalls() - fcalls_before, 3);
  EXPECT_EQ(run.remaining(), 1000 - kCallsAtOnce);
}

// The library goes missing under two batches in flight: neither ran, each
// goes again as single calls, still in the order made, each counted once.
TEST(Coalescing, TwoBatchesThatDidNotRunGoAgainInOrder) {
  AtOnce run("timeout_ms=10000");
  run.make_calls();
  redis_cli("function flush");
  ASSERT_EQ(run.completed_once(), kCallsAtOnce);
  for (int i = 0; i < kCallsAtOnce; ++i) {
    EXPECT_EQ(run.got[static_cast<size_t>(i)].verdict.remaining, 1000 - (i + 1)) << "call " << i;
  }
  EXPECT_EQ(run.remaining(), 1000 - kCallsAtOnce);
}

// The connection breaks under two batches in flight (and calls waiting):
// each call completes once; those that failed may have run, none twice.
TEST(Coalescing, ResetUnderTwoBatchesCompletesEachCallOnce) {
  AtOnce run("timeout_ms=5000&reconnect_max_ms=50");
  run.make_calls();
  run.proxy.reset();
  const int ok = run.completed_once();
  const int64_t remaining = run.remaining();
  EXPECT_LE(remaining, 1000 - ok);
  EXPECT_GE(remaining, 1000 - kCallsAtOnce);
  std::printf("[coalescing] reset: %d of %d decided, %lld taken\n", ok, kCallsAtOnce,
              static_cast<long long>(1000 - remaining));
}

// Both batches in flight time out: each call completes once, with its
// timeout; those that reached Redis count once.
TEST(Coalescing, TimeoutUnderTwoBatchesCompletesEachCallOnce) {
  AtOnce run("timeout_ms=100");
  run.make_calls();
  const int ok = run.completed_once();
  EXPECT_EQ(ok, 0);
  for (int i = 0; i < kCallsAtOnce; ++i)
    EXPECT_EQ(run.done.codes[static_cast<size_t>(i)], Code::timeout);
  const int64_t remaining = run.remaining();
  EXPECT_GE(remaining, 1000 - kCallsAtOnce);
  run.proxy.set_delay(Ms(0));
  EXPECT_EQ(run.limiter->run(Op::acquire, "k", 1).verdict.remaining, remaining - 1);
}

// The store closes under two batches in flight and calls waiting: each
// call completes once, and nothing is left held.
TEST(Coalescing, CloseUnderTwoBatchesCompletesEachCallOnce) {
  AtOnce run("timeout_ms=10000");
  run.make_calls();
  run.store->close();
  EXPECT_EQ(run.completed_once(), 0);
}

}  // namespace
}  // namespace rl::test
