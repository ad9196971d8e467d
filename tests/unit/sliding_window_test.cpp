// sliding_window: on the struct, then through the memory store with the manual clock.
#include "algorithms/sliding_window.h"

#include "capi_helpers.h"
#include "core_helpers.h"

namespace {

using rl_test::OneKey;
using rl_test::rate_of;
using rl_test::verdict_is;

TEST(SlidingWindow, PreviousWindowCountsInProportionToItsOverlap) {
  OneKey<rl::SlidingWindow> key(rate_of("10/s"));  // granularity = window: two counters
  key.acquire(0, 10);
  // At 1.5 s half of the previous window's 10 still counts: 5 units are free.
  for (int i = 4; i >= 0; --i)
    EXPECT_TRUE(verdict_is(key.acquire(1500000), true, 10, i, 0, 1500000));
  // The sixth fits once the weight has fallen to 4: at 1.6 s.
  EXPECT_TRUE(verdict_is(key.acquire(1500000), false, 10, 0, 100000, 1500000));
  EXPECT_TRUE(verdict_is(key.acquire(1600000), true, 10, 0, 0, 1400000));
}

TEST(SlidingWindow, LargeLimitTimesGranularityWeighsExactly) {
  // 2^40 per 366 days in days: the first day's 2^40 weighs 2^40 * (g - offset) / g.
  const int64_t day = 86400000000, limit = int64_t{1} << 40;
  OneKey<rl::SlidingWindow> key(rate_of("1099511627776/366d", 0, day));
  key.acquire(0, limit);
  EXPECT_TRUE(verdict_is(key.acquire(366 * day), false, limit, 0, 1, day));
  // At offset 1 it weighs 2^40 - 12.73, counted as 2^40 - 12.
  EXPECT_TRUE(verdict_is(key.acquire(366 * day + 1), true, limit, 11, 0, 367 * day - 1));
}

TEST(SlidingWindow, FinerGranularityForgetsSubWindowsOneByOne) {
  OneKey<rl::SlidingWindow> key(rate_of("4/s", 0, 250000));  // 4 sub-windows
  key.acquire(0, 2);                                         // sub-window 0
  key.acquire(250000, 2);                                    // sub-window 1
  // From 1 s on sub-window 0 straddles the window's start, its weight falling
  // from 2 units: one unit fits when it has fallen to 1, halfway through.
  EXPECT_TRUE(verdict_is(key.acquire(250000), false, 4, 0, 875000, 1250000));
  EXPECT_TRUE(verdict_is(key.acquire(1124999), false, 4, 0, 1, 375001));
  EXPECT_TRUE(verdict_is(key.acquire(1125000), true, 4, 0, 0, 1125000));
}

TEST(SlidingWindow, CostAboveLimitIsNever) {
  OneKey<rl::SlidingWindow> key(rate_of("3/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0, 4), false, 3, 3, -1, 0));
}

TEST(SlidingWindowStore, EstimateThroughTheCApi) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(
      store.get(), {{"algorithm", "sliding_window"}, {"limit", "6/1m"}, {"granularity", "20s"}});
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k", 6), {true, 6, 0, 0, 80000000}));
  // At 60 s the first sub-window starts to leave: one unit fits once its
  // weight 6 * (20 s - offset) / 20 s has fallen to 5, at 63333334 us.
  EXPECT_TRUE(
      rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {false, 6, 0, 63333334, 80000000}));
  rl_test::advance(store.get(), 63333333);
  EXPECT_EQ(rl_test::acquire(lim.get(), "k").retry_after_us, 1);
  rl_test::advance(store.get(), 1);
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {true, 6, 0, 0, 76666666}));
}

}  // namespace
