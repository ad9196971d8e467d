// Several limits on one limiter ("2/s, 3/1m"): all are checked, consumed
// all-or-nothing; remaining is the smallest, retry_after and reset_after
// the largest, and limit belongs to the limit with the smallest remaining.
#include "algorithms/gcra.h"
#include "algorithms/sliding_log.h"
#include "capi_helpers.h"
#include "core_helpers.h"

namespace {

using rl_test::verdict_is;

template <class Algo>
struct TwoLimits {
  std::vector<rl::Rate> rates{rl_test::rate_of("2/s"), rl_test::rate_of("3/1m")};
  std::vector<typename Algo::State> states = std::vector<typename Algo::State>(2);
  rl::Verdict acquire(int64_t now) {
    bool changed = false;
    return rl::apply<Algo>(rl::Op::acquire, states, rates, now, 1, changed);
  }
};

TEST(MultiLimit, CombinesTheFieldsOfEveryLimit) {
  TwoLimits<rl::Gcra> key;
  EXPECT_TRUE(verdict_is(key.acquire(0), true, 2, 1, 0, 20000000));
  EXPECT_TRUE(verdict_is(key.acquire(0), true, 2, 0, 0, 40000000));
  EXPECT_TRUE(verdict_is(key.acquire(0), false, 2, 0, 500000, 40000000));
  // One second later 2/s is full again but 3/1m has room for one more.
  EXPECT_TRUE(verdict_is(key.acquire(1000000), true, 3, 0, 0, 59000000));
  EXPECT_TRUE(verdict_is(key.acquire(1000000), false, 3, 0, 19000000, 59000000));
}

TEST(MultiLimit, ADenialByOneLimitConsumesFromNone) {
  TwoLimits<rl::SlidingLog> key;
  key.acquire(0);
  key.acquire(0);
  EXPECT_FALSE(key.acquire(0).allowed);  // 2/s denies; 3/1m alone would admit
  EXPECT_EQ(key.states[0].entries.back().cost, 2);
  EXPECT_EQ(key.states[1].entries.back().cost, 2);
}

TEST(MultiLimitStore, AllOrNothingThroughTheCApi) {
  auto store = rl_test::open_manual_store();
  auto lim =
      rl_test::make_limiter(store.get(), {{"algorithm", "fixed_window"}, {"limit", "2/s, 3/1m"}});
  EXPECT_EQ(rl_test::acquire(lim.get(), "k").allowed, 1);
  EXPECT_EQ(rl_test::acquire(lim.get(), "k").allowed, 1);
  EXPECT_TRUE(
      rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {false, 2, 0, 1000000, 60000000}));
  rl_test::advance(store.get(), 1000000);
  // Had the denial consumed from 3/1m, this would be denied.
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {true, 3, 0, 0, 59000000}));
}

}  // namespace

// rl_limiter_limits describes the parsed limits, so bindings never parse
// limit strings themselves.
TEST(MultiLimitStore, LimitsDescribesEveryLimitInOrder) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(
      store.get(), {{"algorithm", "gcra"}, {"limit", "10/s, 1000/1h"}, {"burst", "20, 1000"}});
  EXPECT_EQ(rl_limiter_limits(lim.get(), nullptr, 0), 2u);
  rl_limit_info limits[3] = {};
  ASSERT_EQ(rl_limiter_limits(lim.get(), limits, 3), 2u);
  EXPECT_EQ(limits[0].limit, 10);
  EXPECT_EQ(limits[0].window_us, 1000000);
  EXPECT_EQ(limits[0].burst, 20);
  EXPECT_EQ(limits[1].limit, 1000);
  EXPECT_EQ(limits[1].window_us, int64_t{3600} * 1000000);
  EXPECT_EQ(limits[1].burst, 1000);
  rl_limit_info first = {};
  EXPECT_EQ(rl_limiter_limits(lim.get(), &first, 1), 2u) << "capacity 1 still reports the count";
  EXPECT_EQ(first.limit, 10);
  EXPECT_EQ(rl_limiter_limits(nullptr, limits, 3), 0u);
}
