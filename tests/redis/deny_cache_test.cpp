// The denied-key cache (deny_cache_keys, core/deny_cache/): a denial is
// remembered until its retry_after passes, and calls on that key with at
// least its cost are denied without a store call, with the same fields and
// source deny_cache. It never denies what the store would admit, and it
// spares the store the calls it answers.
#include <thread>

#include "completions.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Ms = std::chrono::milliseconds;

// A verdict as text, its source replaced by `source`.
std::string describe(const Outcome& o, Source source) {
  const Verdict& v = o.verdict;
  return std::to_string(v.allowed) + " " + std::to_string(v.limit) + " " +
         std::to_string(v.remaining) + " " + std::to_string(v.retry_after_us) + " " +
         std::to_string(v.reset_after_us) + " " + std::to_string(v.limit_index) + " " +
         std::to_string(static_cast<int>(source));
}
std::string describe(const Outcome& o) {
  return describe(o, o.verdict.source);
}

Settings cached(const std::string& algorithm, const std::string& limit,
                const std::string& keys = "1000") {
  Settings s = limiter_settings(algorithm, limit);
  s.set("deny_cache_keys", keys);
  return s;
}

// One caller offers 20x the limit (20 calls per emission interval, manual
// clock): the same calls are admitted with the cache as without, and once
// the first second spent the burst, the store sees 1 call per interval
// instead of 20: the admitted one, whose reply says when the next unit is
// free, which the cache keeps.
TEST(DenyCache, TwentyTimesTheLimitAdmitsTheSameWithATwentiethOfTheStoreCalls) {
  for (const char* algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm);
    int64_t admitted[2] = {0, 0}, store_calls[2] = {0, 0}, offered = 0;
    for (int with_cache = 0; with_cache < 2; ++with_cache) {
      auto store = open_redis("clock=manual");
      manual_clock(*store).set(1'700'000'000'000'000);
      Limiter limiter(
          store, with_cache ? cached(algorithm, "100/s") : limiter_settings(algorithm, "100/s"));
      for (int i = 0; i < 20 * 300; ++i) {  // 3 simulated seconds, a call every 500 us
        const Outcome o = limiter.run(Op::acquire, "hot", 1);
        ASSERT_EQ(o.code, Code::ok) << o.message;
        admitted[with_cache] += o.verdict.allowed ? 1 : 0;
        if (i >= 20 * 100) {  // after the first second
          store_calls[with_cache] += o.verdict.source == Source::store ? 1 : 0;
          offered += with_cache;
        }
        manual_clock(*store).advance(500);
      }
    }
    EXPECT_EQ(admitted[1], admitted[0]);
    EXPECT_EQ(store_calls[0], offered);
    EXPECT_LE(store_calls[1] * 10, store_calls[0])
        << store_calls[1] << " store calls with the cache";
    std::printf(
        "[deny_cache] %s: admitted %lld and %lld; store calls %lld without, %lld with (%.1f%% "
        "fewer)\n",
        algorithm, static_cast<long long>(admitted[0]), static_cast<long long>(admitted[1]),
        static_cast<long long>(store_calls[0]), static_cast<long long>(store_calls[1]),
        100.0 - 100.0 * store_calls[1] / store_calls[0]);
  }
}

TEST(DenyCache, ALocalDenialCarriesTheStoresFieldsCountedDown) {
  auto store = open_redis("clock=manual");
  manual_clock(*store).set(1'700'000'000'000'000);
  Limiter limiter(store, cached("fixed_window", "3/s"));
  Limiter plain(store, limiter_settings("fixed_window", "3/s"));  // same keys, no cache
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(limiter.run(Op::acquire, "k", 2 - i).verdict.allowed);
  // That took the last unit: the reply said when another call of cost 1
  // would pass, so the cache knows the denial before any store denied it.
  const Outcome store_says = plain.run(Op::acquire, "k", 1);
  ASSERT_FALSE(store_says.verdict.allowed);
  ASSERT_EQ(store_says.verdict.source, Source::store);
  const Outcome first = limiter.run(Op::acquire, "k", 1);
  EXPECT_FALSE(first.verdict.allowed);
  EXPECT_EQ(first.verdict.source, Source::deny_cache);
  EXPECT_EQ(describe(first), describe(store_says, Source::deny_cache));
  manual_clock(*store).advance(100'000);
  const Outcome here = limiter.run(Op::acquire, "k", 2);
  EXPECT_FALSE(here.verdict.allowed);
  EXPECT_EQ(here.verdict.source, Source::deny_cache);
  EXPECT_EQ(here.verdict.limit, store_says.verdict.limit);
  EXPECT_EQ(here.verdict.remaining, store_says.verdict.remaining);
  EXPECT_EQ(here.verdict.retry_after_us, store_says.verdict.retry_after_us - 100'000);
  EXPECT_EQ(here.verdict.reset_after_us, store_says.verdict.reset_after_us - 100'000);
  // A peek of the same cost is answered here too; cost 0 only describes
  // the key: it asks Redis.
  EXPECT_EQ(limiter.run(Op::peek, "k", 1).verdict.source, Source::deny_cache);
  EXPECT_EQ(limiter.run(Op::peek, "k", 0).verdict.source, Source::store);
  // After retry_after, Redis decides again (and admits).
  manual_clock(*store).advance(store_says.verdict.retry_after_us - 100'000);
  const Outcome later = limiter.run(Op::acquire, "k", 1);
  EXPECT_TRUE(later.verdict.allowed);
  EXPECT_EQ(later.verdict.source, Source::store);
  // Local denials count in the store's statistics under their source.
  EXPECT_EQ(store->stats()->snapshot().denied[static_cast<size_t>(Source::deny_cache)], 3u);
}

TEST(DenyCache, ADenialLearnedForOneCostHoldsForLargerOnly) {
  auto store = open_redis("clock=manual");
  Limiter limiter(store, cached("gcra", "4/h"));
  ASSERT_TRUE(limiter.run(Op::acquire, "k", 3).verdict.allowed);
  const Outcome denied = limiter.run(Op::acquire, "k", 2);  // 1 left: the store denies 2
  ASSERT_FALSE(denied.verdict.allowed);
  EXPECT_EQ(denied.verdict.source, Source::store);
  EXPECT_EQ(limiter.run(Op::acquire, "k", 3).verdict.source, Source::deny_cache);
  const Outcome one = limiter.run(Op::acquire, "k", 1);  // smaller: the store admits it
  EXPECT_TRUE(one.verdict.allowed);
  EXPECT_EQ(one.verdict.source, Source::store);
}

TEST(DenyCache, ARefundOrResetThroughTheLimiterForgetsTheDenial) {
  for (Op op : {Op::refund, Op::reset}) {
    auto store = open_redis("clock=manual");
    Limiter limiter(store, cached("gcra", "2/h"));
    ASSERT_TRUE(limiter.run(Op::acquire, "k", 2).verdict.allowed);
    ASSERT_FALSE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
    ASSERT_EQ(limiter.run(Op::acquire, "k", 1).verdict.source, Source::deny_cache);
    ASSERT_EQ(limiter.run(op, "k", op == Op::reset ? 0 : 1).code, Code::ok);
    const Outcome after = limiter.run(Op::acquire, "k", 1);
    EXPECT_TRUE(after.verdict.allowed);
    EXPECT_EQ(after.verdict.source, Source::store);
  }
}

TEST(DenyCache, AsyncCallsAreAnsweredOnceAndThreadsStayExact) {
  auto store = open_redis("clock=manual");
  Limiter limiter(store, cached("sliding_window", "500/h"));
  constexpr int kThreads = 16, kPerThread = 100;
  Completions done(kThreads * kPerThread);
  std::atomic<int> admitted{0}, local{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        limiter.run_async(Call{Op::acquire, "hot", 1},
                          [&, record = done.for_call(static_cast<size_t>(t * kPerThread + i))](
                              Outcome&& o) mutable {
                            if (o.verdict.allowed) ++admitted;
                            if (o.verdict.source == Source::deny_cache) ++local;
                            record(std::move(o));
                          });
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(done.wait_all(Ms(30000)));
  for (size_t i = 0; i < done.runs.size(); ++i) ASSERT_EQ(done.runs[i], 1);
  EXPECT_EQ(admitted, 500);
  EXPECT_EQ(limiter.run(Op::peek, "hot", 0).verdict.remaining, 0);
  // The denials are known now: a second wave is answered here, each once.
  local = 0;
  Completions again(kPerThread);
  for (int i = 0; i < kPerThread; ++i) {
    limiter.run_async(Call{Op::acquire, "hot", 1},
                      [&, record = again.for_call(static_cast<size_t>(i))](Outcome&& o) mutable {
                        if (o.verdict.source == Source::deny_cache) ++local;
                        record(std::move(o));
                      });
  }
  ASSERT_TRUE(again.wait_all(Ms(30000)));
  for (int r : again.runs) ASSERT_EQ(r, 1);
  EXPECT_EQ(local, kPerThread);
}

// When a denial runs out, one call asks the store and the calls that come
// while it is in flight wait for its answer: gcra 1/s, the unit taken, the
// clock moved past the hint, then 200 calls at once: the first is admitted
// by the store (and its reply says when the next unit is free), the other
// 199 are denied here. Without the wait every call sent before that reply
// came back was one more store call. Exact whatever the timing: a call
// either waits for the probe or finds its answer.
TEST(DenyCache, CallsOnARunOutDenialWaitForOneStoreCall) {
  auto store = open_redis("clock=manual");
  manual_clock(*store).set(1'700'000'000'000'000);
  Limiter limiter(store, cached("gcra", "1/s"));
  ASSERT_TRUE(limiter.run(Op::acquire, "hot", 1).verdict.allowed);
  for (bool async : {true, false}) {
    SCOPED_TRACE(async ? "async calls" : "sync calls on 16 threads");
    manual_clock(*store).advance(1'000'000);
    constexpr int kCalls = 200;
    std::atomic<int> admitted{0}, from_store{0};
    auto count = [&](const Outcome& o) {
      EXPECT_EQ(o.code, Code::ok) << o.message;
      if (o.verdict.allowed) ++admitted;
      if (o.verdict.source == Source::store) ++from_store;
    };
    // Redis holds the first call's reply until all are in (CLIENT PAUSE is
    // Redis's timer, not a sleep here): the others surely meet the probe.
    redis_cli("CLIENT PAUSE 200 WRITE");
    if (async) {
      Completions done(kCalls);
      for (int i = 0; i < kCalls; ++i) {
        limiter.run_async(Call{Op::acquire, "hot", 1},
                          [&, record = done.for_call(static_cast<size_t>(i))](Outcome&& o) mutable {
                            count(o);
                            record(std::move(o));
                          });
      }
      ASSERT_TRUE(done.wait_all(Ms(30000)));
      for (int r : done.runs) ASSERT_EQ(r, 1);
    } else {
      std::vector<std::thread> threads;
      for (int t = 0; t < 16; ++t) {
        threads.emplace_back([&, t] {
          for (int i = t; i < kCalls; i += 16) count(limiter.run(Op::acquire, "hot", 1));
        });
      }
      for (auto& t : threads) t.join();
    }
    EXPECT_EQ(admitted, 1);
    EXPECT_EQ(from_store, 1);
  }
}

// A call waits only for a probe that ends by its own deadline: behind a
// probe with the store's timeout, a call with a deadline of its own asks
// the store itself (and one with the store's timeout waits).
TEST(DenyCache, ACallWithItsOwnDeadlineDoesNotWaitForAProbeWithoutOne) {
  auto store = open_redis("clock=manual");
  manual_clock(*store).set(1'700'000'000'000'000);
  Limiter limiter(store, cached("gcra", "1/s"));
  ASSERT_TRUE(limiter.run(Op::acquire, "hot", 1).verdict.allowed);
  manual_clock(*store).advance(1'000'000);
  redis_cli("CLIENT PAUSE 200 WRITE");
  std::array<Source, 3> sources{};
  Completions done(3);
  const int64_t timeouts[3] = {0, 5'000'000, 0};  // the probe, its own deadline, the store's
  for (size_t i = 0; i < 3; ++i) {
    limiter.run_async(Call{Op::acquire, "hot", 1, timeouts[i]},
                      [&, i, record = done.for_call(i)](Outcome&& o) mutable {
                        EXPECT_EQ(o.code, Code::ok) << o.message;
                        sources[i] = o.verdict.source;
                        record(std::move(o));
                      });
  }
  ASSERT_TRUE(done.wait_all(Ms(30000)));
  EXPECT_EQ(sources[0], Source::store);
  EXPECT_EQ(sources[1], Source::store);
  EXPECT_EQ(sources[2], Source::deny_cache);
}

TEST(DenyCache, IsBoundedAndRefusesABadSize) {
  auto store = open_redis("clock=manual");
  Limiter limiter(store, cached("gcra", "1/h", "64"));
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_TRUE(limiter.run(Op::acquire, key, 1).verdict.allowed);
    ASSERT_FALSE(limiter.run(Op::acquire, key, 1).verdict.allowed);
  }
  // The latest keys are still remembered; the cap forgot older ones.
  EXPECT_EQ(limiter.run(Op::acquire, "k999", 1).verdict.source, Source::deny_cache);
  try {
    Limiter bad(store, cached("gcra", "1/h", "-1"));
    FAIL() << "deny_cache_keys=-1 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_arg);
    EXPECT_NE(std::string(e.what()).find("deny_cache_keys"), std::string::npos);
  }
}

}  // namespace
}  // namespace rl::test
