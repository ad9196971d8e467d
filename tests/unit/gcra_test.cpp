// gcra: on the struct, then through the memory store with the manual clock.
#include "algorithms/gcra.h"

#include "capi_helpers.h"
#include "core_helpers.h"
#include "error.h"

namespace {

using rl_test::OneKey;
using rl_test::rate_of;
using rl_test::verdict_is;

TEST(Gcra, FirstRequestLeavesTheRestOfTheBurst) {
  OneKey<rl::Gcra> key(rate_of("10/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0), true, 10, 9, 0, 100000));
}

TEST(Gcra, FractionalRateAdmitsItsWholeBurstAtOnce) {
  // 3/s: one unit every 333333.33 us, kept exact rather than rounded per request.
  OneKey<rl::Gcra> key(rate_of("3/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0), true, 3, 2, 0, 333334));
  EXPECT_TRUE(verdict_is(key.acquire(0), true, 3, 1, 0, 666667));
  EXPECT_TRUE(verdict_is(key.acquire(0), true, 3, 0, 0, 1000000));
  EXPECT_TRUE(verdict_is(key.acquire(0), false, 3, 0, 333334, 1000000));
}

TEST(Gcra, RefillsAtTheExactMicrosecond) {
  OneKey<rl::Gcra> key(rate_of("3/s"));
  key.acquire(0, 3);
  EXPECT_TRUE(verdict_is(key.acquire(333333), false, 3, 0, 1, 666667));
  EXPECT_TRUE(verdict_is(key.acquire(333334), true, 3, 0, 0, 1000000));
}

TEST(Gcra, LimitsBeyondTwoTo52ScaledUnitsStayExact) {
  // 86399/1d: one unit every 1000011.574 us; burst * window = 2^52.7 scaled units.
  OneKey<rl::Gcra> day(rate_of("86399/1d"));
  EXPECT_TRUE(verdict_is(day.acquire(0, 86399), true, 86399, 0, 0, 86400000000));
  EXPECT_TRUE(verdict_is(day.acquire(1000011), false, 86399, 0, 1, 86398999989));
  EXPECT_TRUE(verdict_is(day.acquire(1000012), true, 86399, 0, 0, 86400000000));
  // 2^40/366d with its burst: 2^85 scaled units, one unit every 28.76 us.
  OneKey<rl::Gcra> year(rate_of("1099511627776/366d"));
  EXPECT_TRUE(
      verdict_is(year.acquire(0, int64_t{1} << 40), true, int64_t{1} << 40, 0, 0, 31622400000000));
  EXPECT_TRUE(verdict_is(year.acquire(28), false, int64_t{1} << 40, 0, 1, 31622399999972));
}

TEST(Gcra, ABurstThatTakesLongerThanTwoTo52UsIsRefusedNamingItsRule) {
  EXPECT_NO_THROW(rate_of("1/366d", 142));
  try {
    rate_of("1/366d", 143);
    FAIL() << "accepted";
  } catch (const rl::Error& e) {
    EXPECT_EQ(e.code(), rl::Code::invalid_arg);
    EXPECT_NE(std::string(e.what()).find("burst * window / limit must be at most 2^52 us"),
              std::string::npos)
        << e.what();
  }
}

TEST(Gcra, CostAboveBurstIsNeverAdmittedAndConsumesNothing) {
  OneKey<rl::Gcra> key(rate_of("10/s", 5));
  EXPECT_TRUE(verdict_is(key.acquire(0, 6), false, 10, 5, -1, 0));
  EXPECT_TRUE(verdict_is(key.acquire(0, 5), true, 10, 0, 0, 500000));
}

TEST(Gcra, RefundGivesUnitsBackButNeverBeyondTheBurst) {
  OneKey<rl::Gcra> key(rate_of("10/s"));
  key.acquire(0, 4);
  EXPECT_TRUE(verdict_is(key.run(rl::Op::refund, 0, 3), true, 10, 9, 0, 100000));
  EXPECT_TRUE(verdict_is(key.run(rl::Op::refund, 0, 100), true, 10, 10, 0, 0));
}

TEST(GcraStore, BurstThenDenialThenRefillThroughTheCApi) {
  auto store = rl_test::open_manual_store();
  auto lim =
      rl_test::make_limiter(store.get(), {{"algorithm", "gcra"}, {"limit", "2/s"}, {"burst", "4"}});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rl_test::acquire(lim.get(), "k").allowed, 1);
  EXPECT_TRUE(
      rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {false, 2, 0, 500000, 2000000}));
  EXPECT_TRUE(rl_test::decision_is(rl_test::peek(lim.get(), "other"), {true, 2, 3, 0, 500000}));
  rl_test::advance(store.get(), 499999);
  EXPECT_EQ(rl_test::acquire(lim.get(), "k").allowed, 0);
  rl_test::advance(store.get(), 1);
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {true, 2, 0, 0, 2000000}));
  ASSERT_EQ(rl_limiter_reset(lim.get(), "k", 1, nullptr), RL_OK);
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {true, 2, 3, 0, 500000}));
}

}  // namespace
