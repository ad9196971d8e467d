// sliding_log's list (key schema v2): its size per entry, its running totals
// restarting from 0 (every value stays below 2^53), and several limits
// sharing one log, each against the memory store.
#include <cstdlib>

#include "clock.h"
#include "redis_env.h"

namespace rl::test {
namespace {

std::string describe(const Verdict& v) {
  return "{allowed " + std::to_string(v.allowed) + ", limit " + std::to_string(v.limit) +
         ", remaining " + std::to_string(v.remaining) + ", retry " +
         std::to_string(v.retry_after_us) + ", reset " + std::to_string(v.reset_after_us) + "}";
}

// A limiter on memory:// and on Redis, both on a manual clock. The long
// timeout: these tests make thousands of calls in a row, and a loaded 2-core
// machine once stalled one past the default (a timeout, not a wrong answer).
struct Pair {
  std::string prefix = unique_prefix();
  std::shared_ptr<Store> memory = open_store("memory://?clock=manual", {});
  std::shared_ptr<Store> redis = open_store(redis_url("clock=manual&timeout_ms=10000", prefix), {});
  Limiter on_memory;
  Limiter on_redis;
  explicit Pair(const std::string& limit)
      : on_memory(memory, limiter_settings("sliding_log", limit)),
        on_redis(redis, limiter_settings("sliding_log", limit)) {
    manual_clock(*memory).set(1'700'000'000'000'000);
    manual_clock(*redis).set(1'700'000'000'000'000);
  }
  void advance(int64_t us) {
    manual_clock(*memory).advance(us);
    manual_clock(*redis).advance(us);
  }
  // Runs op on both; true when Redis answered as the memory store did.
  ::testing::AssertionResult same(Op op, int64_t cost) {
    const Outcome m = on_memory.run(op, "k", cost);
    const Outcome r = on_redis.run(op, "k", cost);
    if (r.code != Code::ok) return ::testing::AssertionFailure() << r.message;
    if (describe(r.verdict) != describe(m.verdict))
      return ::testing::AssertionFailure() << describe(r.verdict) << " vs " << describe(m.verdict);
    return ::testing::AssertionSuccess();
  }
};

TEST(SlidingLogList, HoldsAnEntryInAtMost40Bytes) {
  for (int n : {1000, 10000}) {
    Pair pair(std::to_string(n) + "/h");
    for (int i = 0; i < n; ++i) {
      const Outcome out = pair.on_redis.run(Op::acquire, "k", 1);
      ASSERT_EQ(out.code, Code::ok) << "entry " << i << ": " << out.message;
      ASSERT_TRUE(out.verdict.allowed) << "entry " << i << ": " << describe(out.verdict);
      pair.advance(1);
    }
    const std::string key =
        pair.prefix + ":t:{k}:v2:sliding_log:" + std::to_string(n) + "/3600000000";
    EXPECT_EQ(std::atoll(redis_cli("llen " + key).c_str()), n);
    const double bytes = std::atof(redis_cli("memory usage " + key + " samples 0").c_str());
    EXPECT_LE(bytes / n, 40.0) << n << " entries";
  }
}

TEST(SlidingLogList, RunningTotalsRestartBefore2To53AndDecideAlike) {
  // 2^40 units a second: the totals pass 2^51 (where they restart) after
  // 2,048 seconds. Each second also leaves small entries behind the big one.
  Pair pair("1099511627776/s");
  constexpr int64_t kLimit = int64_t{1} << 40;
  for (int second = 0; second < 2100; ++second) {
    ASSERT_TRUE(pair.same(Op::acquire, kLimit - 3)) << "second " << second;
    for (int i = 0; i < 3; ++i) {
      pair.advance(1);
      ASSERT_TRUE(pair.same(Op::acquire, 1)) << "second " << second;
    }
    ASSERT_TRUE(pair.same(Op::acquire, 1)) << "second " << second;  // denied: full
    pair.advance(1'000'000 - 3);
  }
  ASSERT_TRUE(pair.same(Op::refund, 2));
  ASSERT_TRUE(pair.same(Op::peek, 0));
}

TEST(SlidingLogList, LimitsOfDifferentWindowsShareOneLog) {
  Pair pair("3/s, 10/10s");
  for (int step = 0; step < 60; ++step) {
    ASSERT_TRUE(pair.same(Op::acquire, 1 + step % 2)) << "step " << step;
    if (step % 7 == 0) {
      ASSERT_TRUE(pair.same(Op::refund, 2)) << "step " << step;
    }
    pair.advance(step % 5 == 0 ? 900'000 : 150'000);
  }
  EXPECT_EQ(redis_cli("type " + pair.prefix + ":t:{k}:v2:sliding_log:3/1000000,10/10000000"),
            "list\n");
}

// An acquire at the newest entry's instant adds to that entry: the next
// call's wait (next_retry, for the denied-key cache) then counts it there,
// not in the oldest entry, which frees too little.
TEST(SlidingLogList, NextRetryCountsAJoinedEntryAsTheNewest) {
  Pair pair("4/s");
  ASSERT_TRUE(pair.same(Op::acquire, 1));
  pair.advance(10);
  ASSERT_TRUE(pair.same(Op::acquire, 1));
  const Outcome o = pair.on_redis.run(Op::acquire, "k", 2);  // same instant: joins the newest
  ASSERT_EQ(o.code, Code::ok) << o.message;
  ASSERT_TRUE(o.verdict.allowed);
  EXPECT_EQ(o.verdict.remaining, 0);
  // Another 2 need the newest entry's 3 units gone: 1 s from now (the
  // oldest's 1 unit leaves 10 us earlier, too few).
  EXPECT_EQ(o.verdict.next_retry_after_us, 1'000'000);
}

}  // namespace
}  // namespace rl::test
