// The failure policy on a real redis-server: what each on_failure gives for
// an outage, the circuit breaker short-cutting a hung server and probing it
// back, and what the local fallback remembers across a recovery.
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "failover/failover_store.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Steady = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// Nothing listens on port 1 of loopback: every call is refused at once.
std::shared_ptr<Store> unreachable_store(const std::string& extra = "") {
  return open_store("redis://127.0.0.1:1/?connect_timeout_ms=200&timeout_ms=200" +
                        (extra.empty() ? "" : "&" + extra),
                    {});
}

Settings with_failure(const char* on_failure, const char* limit = "8/h",
                      const char* share = nullptr) {
  Settings s = limiter_settings("gcra", limit);
  s.set("on_failure", on_failure);
  if (share != nullptr) s.set("local_share", share);
  return s;
}

TEST(Failover, ClosedGivesTheOutage) {
  auto store = unreachable_store();
  Limiter limiter(store, with_failure("closed"));
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
}

TEST(Failover, OpenAllowsAndSaysSo) {
  auto store = unreachable_store();
  Limiter limiter(store, with_failure("open"));
  for (int i = 0; i < 20; ++i) {
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    EXPECT_TRUE(o.verdict.allowed);
    EXPECT_EQ(o.verdict.source, Source::fail_open);
    EXPECT_EQ(o.verdict.limit, 8);
  }
}

TEST(Failover, LocalAdmitsOnlyItsShare) {
  auto store = unreachable_store();
  Limiter limiter(store, with_failure("local", "8/h", "1/4"));
  int admitted = 0;
  for (int i = 0; i < 20; ++i) {
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    EXPECT_EQ(o.verdict.source, Source::local);
    admitted += o.verdict.allowed ? 1 : 0;
  }
  EXPECT_EQ(admitted, 2) << "8/h with local_share=1/4";
}

TEST(Failover, BadInputIsNeverFailedOpen) {
  auto store = unreachable_store();
  Limiter limiter(store, with_failure("open"));
  EXPECT_THROW(limiter.run(Op::acquire, "k", 0), Error);
  EXPECT_THROW(limiter.run(Op::acquire, "", 1), Error);
}

TEST(Failover, BatchesAndAsyncCallsFallBackToo) {
  auto store = unreachable_store();
  Limiter limiter(store, with_failure("local", "8/h", "1/2"));
  std::vector<Call> calls(6, Call{Op::acquire, "b", 1});
  const std::vector<Outcome> outcomes = limiter.acquire_batch(calls);
  int admitted = 0;
  for (const Outcome& o : outcomes) {
    ASSERT_EQ(o.code, Code::ok) << o.message;
    EXPECT_EQ(o.verdict.source, Source::local);
    admitted += o.verdict.allowed ? 1 : 0;
  }
  EXPECT_EQ(admitted, 4);

  std::mutex mutex;
  std::condition_variable done;
  int completions = 0;
  for (int i = 0; i < 50; ++i) {
    limiter.run_async(Call{Op::acquire, "a", 1}, [&](Outcome&& o) {
      EXPECT_EQ(o.verdict.source, Source::local);
      std::lock_guard lock(mutex);
      ++completions;
      done.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  ASSERT_TRUE(done.wait_for(lock, Ms(5000), [&] { return completions == 50; }));
}

// A hung server (CLIENT PAUSE): the first calls wait for their deadline,
// then the breaker opens and calls take the policy at once; after the
// cool-down a probe finds Redis back and decisions come from it again.
TEST(Failover, BreakerShortCutsAHungServerAndProbesItBack) {
  auto store =
      open_redis("clock=manual&timeout_ms=100&breaker_failures=3&breaker_cooldown_ms=1000");
  auto& breaker = dynamic_cast<FailoverStore&>(*store).breaker();
  Limiter limiter(store, with_failure("open"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).verdict.source, Source::store);

  redis_cli("client pause 10000 write");
  for (int i = 0; i < 3; ++i) {
    const auto start = Steady::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    EXPECT_EQ(o.verdict.source, Source::fail_open);
    EXPECT_LT(Steady::now() - start, Ms(100 + 150)) << "deadline plus slack";
  }
  EXPECT_EQ(breaker.state(), BreakerState::open);
  Steady::duration slowest{};
  for (int i = 0; i < 200; ++i) {
    const auto start = Steady::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    slowest = std::max(slowest, Steady::now() - start);
    EXPECT_EQ(o.verdict.source, Source::fail_open);
  }
  // Far below the 100 ms a call to the hung server takes (under 1 ms on an
  // idle machine; the bound leaves room for sanitizers and CPU steal).
  EXPECT_LT(slowest, Ms(20));
  std::printf("breaker open: slowest of 200 decisions %.3f ms\n",
              std::chrono::duration<double, std::milli>(slowest).count());

  redis_cli("client unpause");
  EXPECT_EQ(limiter.run(Op::acquire, "k", 1).verdict.source, Source::fail_open)
      << "still cooling down";
  // The statistics saw it all: 1 + 3 + 200 + 1 decisions so far.
  const StatsView view = store->stats_view();
  const StoreStats::Snapshot counts = view.stats->snapshot();
  EXPECT_EQ(counts.allowed[static_cast<size_t>(Source::store)], 1u);
  EXPECT_EQ(counts.allowed[static_cast<size_t>(Source::fail_open)], 204u);
  EXPECT_EQ(view.breaker, BreakerState::open);
  EXPECT_EQ(view.breaker_opened, 1);
  EXPECT_EQ(view.stats->round_trips.count(), 4u) << "one answer, three timeouts";
  EXPECT_GE(view.stats->round_trips.max(), 100000) << "a timeout took its 100 ms";
  manual_clock(*store).advance(1000000);
  const Outcome probe = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(probe.verdict.source, Source::store) << probe.message;
  EXPECT_EQ(breaker.state(), BreakerState::closed);
  // Redis counted the two it answered and the three that timed out: a
  // paused server runs their scripts once it resumes. A timed-out call may
  // have counted, once; a call the open breaker answered never reached it.
  EXPECT_EQ(limiter.run(Op::peek, "k", 0).verdict.remaining, 8 - 2 - 3);
}

// The local fallback's state stays in the process after Redis recovers and
// decays by its own windows: a second outage within the window finds the
// share already spent.
TEST(Failover, LocalStateOutlivesARecoveryUntilItsWindowEnds) {
  auto store = open_redis("clock=manual&timeout_ms=100&breaker_failures=1&breaker_cooldown_ms=10");
  Limiter limiter(store, with_failure("local", "4/h", "1/2"));
  redis_cli("client pause 10000 write");
  EXPECT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);  // times out, local 1 of 2
  EXPECT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);  // breaker open: local 2 of 2
  EXPECT_FALSE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  redis_cli("client unpause");
  manual_clock(*store).advance(10000);
  Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.verdict.source, Source::store);
  EXPECT_TRUE(o.verdict.allowed);
  redis_cli("client pause 10000 write");
  o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.verdict.source, Source::local);
  EXPECT_FALSE(o.verdict.allowed) << "the local share was spent in the first outage";
  redis_cli("client unpause");
}

}  // namespace
}  // namespace rl::test
