// fixed_window: on the struct, then through the memory store with the manual clock.
#include "algorithms/fixed_window.h"

#include "capi_helpers.h"
#include "core_helpers.h"

namespace {

using rl_test::OneKey;
using rl_test::rate_of;
using rl_test::verdict_is;

TEST(FixedWindow, CountsWithinTheAlignedWindow) {
  OneKey<rl::FixedWindow> key(rate_of("2/s"));
  EXPECT_TRUE(verdict_is(key.acquire(400000), true, 2, 1, 0, 600000));
  EXPECT_TRUE(verdict_is(key.acquire(400000), true, 2, 0, 0, 600000));
  EXPECT_TRUE(verdict_is(key.acquire(999999), false, 2, 0, 1, 1));
  EXPECT_TRUE(verdict_is(key.acquire(1000000), true, 2, 1, 0, 1000000));
}

TEST(FixedWindow, TwoTo40PerSecondIsAccepted) {
  const int64_t limit = int64_t{1} << 40;
  OneKey<rl::FixedWindow> key(rate_of("1099511627776/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0, limit), true, limit, 0, 0, 1000000));
  EXPECT_TRUE(verdict_is(key.acquire(1), false, limit, 0, 999999, 999999));
}

TEST(FixedWindow, CostAboveLimitIsNever) {
  OneKey<rl::FixedWindow> key(rate_of("2/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0, 3), false, 2, 2, -1, 0));
}

TEST(FixedWindow, RefundNeverGoesBelowZero) {
  OneKey<rl::FixedWindow> key(rate_of("5/s"));
  key.acquire(0, 2);
  EXPECT_TRUE(verdict_is(key.run(rl::Op::refund, 0, 10), true, 5, 5, 0, 0));
}

TEST(FixedWindowStore, BoundaryThroughTheCApi) {
  auto store = rl_test::open_manual_store();
  ASSERT_EQ(rl_store_clock_set(store.get(), 59999999, nullptr), RL_OK);
  auto lim =
      rl_test::make_limiter(store.get(), {{"algorithm", "fixed_window"}, {"limit", "10/1m"}});
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k", 10), {true, 10, 0, 0, 1}));
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {false, 10, 0, 1, 1}));
  rl_test::advance(store.get(), 1);
  EXPECT_TRUE(
      rl_test::decision_is(rl_test::acquire(lim.get(), "k", 10), {true, 10, 0, 0, 60000000}));
}

}  // namespace
