// sliding_log: on the struct, then through the memory store with the manual clock.
#include "algorithms/sliding_log.h"

#include <algorithm>
#include <vector>

#include "capi_helpers.h"
#include "core_helpers.h"

namespace {

using rl_test::OneKey;
using rl_test::rate_of;
using rl_test::verdict_is;

TEST(SlidingLog, AdmitsTheLimitThenWaitsForTheOldestEntry) {
  OneKey<rl::SlidingLog> key(rate_of("3/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0), true, 3, 2, 0, 1000000));
  EXPECT_TRUE(verdict_is(key.acquire(10), true, 3, 1, 0, 1000000));
  EXPECT_TRUE(verdict_is(key.acquire(20), true, 3, 0, 0, 1000000));
  // Two units must wait until the two oldest entries (at 0 and 10) expire.
  EXPECT_TRUE(verdict_is(key.acquire(30, 2), false, 3, 0, 999980, 999990));
}

TEST(SlidingLog, AnEntryLeavesExactlyOneWindowLater) {
  OneKey<rl::SlidingLog> key(rate_of("2/s"));
  key.acquire(0, 2);
  EXPECT_TRUE(verdict_is(key.acquire(999999), false, 2, 0, 1, 1));
  EXPECT_TRUE(verdict_is(key.acquire(1000000), true, 2, 1, 0, 1000000));
}

TEST(SlidingLog, ADaysQuotaOf100001IsAccepted) {
  OneKey<rl::SlidingLog> key(rate_of("100001/1d"));
  EXPECT_TRUE(verdict_is(key.acquire(0, 100001), true, 100001, 0, 0, 86400000000));
  EXPECT_TRUE(verdict_is(key.acquire(86399999999), false, 100001, 0, 1, 1));
  EXPECT_TRUE(verdict_is(key.acquire(86400000000), true, 100001, 100000, 0, 86400000000));
}

TEST(SlidingLog, CostAboveLimitIsNeverAndConsumesNothing) {
  OneKey<rl::SlidingLog> key(rate_of("2/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0, 3), false, 2, 2, -1, 0));
  EXPECT_TRUE(key.states[0].entries.empty());
}

TEST(SlidingLog, RefundRemovesTheNewestUnitsFirst) {
  OneKey<rl::SlidingLog> key(rate_of("4/s"));
  key.acquire(0, 2);
  key.acquire(500000, 2);
  EXPECT_TRUE(verdict_is(key.run(rl::Op::refund, 500000, 3), true, 4, 3, 0, 500000));
  // The unit left is the one from 0: it expires at 1 s.
  EXPECT_TRUE(verdict_is(key.acquire(999999, 4), false, 4, 3, 1, 1));
}

TEST(SlidingLog, AmongManyEntriesFindsTheOneThatFreesEnough) {
  OneKey<rl::SlidingLog> key(rate_of("10000/s"));
  for (int64_t at = 0; at < 10000; ++at) key.acquire(at, 1);
  EXPECT_EQ(key.states[0].entries.size(), 10000u);
  // 5,000 units wait until the 5,000th oldest entry (at 4999) leaves.
  EXPECT_TRUE(verdict_is(key.acquire(10000, 5000), false, 10000, 0, 994999, 999999));
  // The entries at 0..2500 have left: 7,499 units live, 2,501 fit.
  EXPECT_TRUE(verdict_is(key.acquire(1002500, 2501), true, 10000, 0, 0, 1000000));
  EXPECT_EQ(key.states[0].entries.size(), 7500u);
  // The newest units go back first: the new entry, then the one at 9999.
  EXPECT_TRUE(verdict_is(key.run(rl::Op::refund, 1002500, 2502), true, 10000, 2502, 0, 7498));
  EXPECT_EQ(key.states[0].entries.size(), 7498u);
}

TEST(SlidingLogStore, WindowSlidesThroughTheCApi) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"algorithm", "sliding_log"}, {"limit", "2/1m"}});
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {true, 2, 1, 0, 60000000}));
  rl_test::advance(store.get(), 30000000);
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {true, 2, 0, 0, 60000000}));
  EXPECT_TRUE(
      rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {false, 2, 0, 30000000, 60000000}));
  rl_test::advance(store.get(), 30000000);
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {true, 2, 0, 0, 60000000}));
}

}  // namespace

// The search by galloping gives std::partition_point's answer, wherever the
// answer lies, on every length.
TEST(SlidingLog, SearchFromFrontFindsWhatPartitionPointFinds) {
  for (int n = 0; n <= 70; ++n) {
    std::vector<int> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
    for (int k = 0; k <= n; ++k) {
      auto below = [k](int x) { return x < k; };
      EXPECT_EQ(rl::SlidingLog::search_from_front(v.begin(), v.end(), below),
                std::partition_point(v.begin(), v.end(), below))
          << "n " << n << ", k " << k;
    }
  }
}
