// Leases on gcra and token_bucket (core/algorithms/lease_hold.h): a slice's
// units are held out of the bucket until released or expired, so a unit
// used late never lands beside units refilled meanwhile. Exact steps on the
// structs, then random processes whose every use is checked against the
// bucket's promise: no interval [a, b] admits more than
// burst + rate * (b - a).

#include "algorithms/gcra.h"
#include "algorithms/token_bucket.h"
#include "core_helpers.h"
#include "lease_processes.h"

namespace {

using rl_test::rate_of;

template <class Algo>
using Bucket = rl_test::LeasedState<Algo>;

template <class Algo>
class LeaseHold : public ::testing::Test {};
using Buckets = ::testing::Types<rl::Gcra, rl::TokenBucket>;
TYPED_TEST_SUITE(LeaseHold, Buckets);

constexpr int64_t kSecond = 1'000'000;

// 10/s: a unit refills every 100 ms. Holds of 1 s: generation 0 is [0, 1 s).
TYPED_TEST(LeaseHold, TheBucketRefillsOnlyToCapacityLessTheHeldUnits) {
  Bucket<TypeParam> b(rate_of("10/s"));
  const rl::Verdict grant = b.lease(0, 4, kSecond);
  ASSERT_TRUE(grant.allowed);
  EXPECT_EQ(grant.next_retry_after_us, 0);  // the grant's time: 0
  EXPECT_EQ(grant.remaining, 6);
  EXPECT_TRUE(b.acquire(0, 6).allowed);
  EXPECT_FALSE(b.acquire(0).allowed);
  // 900 ms refill 9, but the 4 held keep the bucket at 6.
  const rl::Verdict held = b.acquire(900'000, 7);
  EXPECT_FALSE(held.allowed);
  EXPECT_EQ(held.remaining, 6);
  // The hold of generation 0 lasts to 2 s (a slice granted late in it may
  // be used until then); from there the capacity comes back at the rate:
  // room for 7 (a floor of 3) at 2.1 s.
  EXPECT_EQ(held.retry_after_us, 2'100'000 - 900'000);
  EXPECT_EQ(held.reset_after_us, 2'400'000 - 900'000);
  EXPECT_TRUE(b.acquire(900'000, 6).allowed);
}

TYPED_TEST(LeaseHold, AReleaseGivesTheUnusedUnitsBackAndLiftsTheHold) {
  Bucket<TypeParam> b(rate_of("10/s"));
  ASSERT_TRUE(b.lease(0, 4, kSecond).allowed);
  EXPECT_TRUE(b.acquire(0, 6).allowed);
  // 3 of the 4 were used; 1 comes back to the bucket as it stands (6 at
  // 900 ms: held at capacity less 4), and the cap is gone.
  EXPECT_TRUE(b.release(900'000, 1, 0, 4));
  EXPECT_EQ(b.peek(900'000).remaining, 7);
  EXPECT_EQ(b.peek(1'200'000).remaining, 10);
  // Released once: again is a no-op.
  EXPECT_FALSE(b.release(1'200'000, 1, 0, 4));
  EXPECT_EQ(b.peek(1'200'000).remaining, 10);
}

// The case an unheld slice would get wrong: units refill while the slice's
// rest waits, then a late return would add them on top.
TYPED_TEST(LeaseHold, AReturnAfterTheHoldExpiredGivesNothing) {
  Bucket<TypeParam> b(rate_of("10/s"));
  ASSERT_TRUE(b.lease(0, 5, kSecond).allowed);  // 5 left in the bucket, 5 held
  EXPECT_TRUE(b.acquire(0, 5).allowed);
  // 2.2 s: the hold expired at 2 s and the capacity came back by 2 units.
  EXPECT_EQ(b.peek(2'200'000).remaining, 7);
  EXPECT_TRUE(b.acquire(2'200'000, 7).allowed);
  EXPECT_FALSE(b.release(2'200'000, 5, 0, 5));  // the process ended its lease long ago
  EXPECT_FALSE(b.acquire(2'200'000).allowed);
}

TYPED_TEST(LeaseHold, AHoldFromAnotherLeaseLengthIsRefusedWhileOneLives) {
  Bucket<TypeParam> b(rate_of("10/s"));
  ASSERT_TRUE(b.lease(0, 2, kSecond).allowed);
  EXPECT_FALSE(b.lease(10, 2, 2 * kSecond).allowed);  // would be used past the hold
  EXPECT_TRUE(b.lease(10, 2, kSecond / 2).allowed);   // within it
  EXPECT_EQ(b.peek(10).remaining, 6);                 // nothing taken by the refusal
}

TYPED_TEST(LeaseHold, AReleaseOfASliceFromBeforeAResetTakesNothingOff) {
  Bucket<TypeParam> b(rate_of("10/s"));
  ASSERT_TRUE(b.lease(0, 4, kSecond).allowed);
  b.run(rl::Op::reset, 100, 0);
  ASSERT_TRUE(b.lease(200, 3, kSecond).allowed);  // another process's, after the reset
  EXPECT_FALSE(b.release(300, 4, 0, 4));
  EXPECT_EQ(b.peek(300).remaining, 7);
  EXPECT_TRUE(b.release(300, 3, 200, 3));
  EXPECT_EQ(b.peek(300).remaining, 10);
}

TYPED_TEST(LeaseHold, ExpiredHoldsLeaveAnOrdinaryState) {
  Bucket<TypeParam> b(rate_of("10/s"));
  ASSERT_TRUE(b.lease(0, 4, kSecond).allowed);
  EXPECT_GT(TypeParam::idle_at(b.states[0], b.rates[0]), 2'000'000);
  EXPECT_TRUE(b.acquire(3 * kSecond).allowed);
  EXPECT_FALSE(b.states[0].hold);
}

// Processes that lease, use and release (lease_processes.h) beside plain
// acquires: every admitted unit's time checked against the promise.
template <class Algo>
void random_processes(const rl::Rate& r, int64_t hold_us, uint32_t seed) {
  Bucket<Algo> b(r);
  // Mostly an eighth of a unit's time or less between calls.
  const rl_test::LeaseSteps how{3000, r.window_us / r.limit / 8, std::max<int64_t>(1, r.burst / 2),
                                std::max<int64_t>(1, r.burst / 3)};
  const std::vector<std::pair<int64_t, int64_t>> uses =
      rl_test::random_lease_uses(b, how, hold_us, seed);
  // used(a..b) * window <= burst * window + limit * (b - a), for every pair.
  for (size_t i = 0; i < uses.size(); ++i) {
    int64_t units = 0;
    for (size_t j = i; j < uses.size(); ++j) {
      units += uses[j].second;
      const rl::int128 allowed =
          rl::int128{r.burst} * r.window_us + rl::int128{r.limit} * (uses[j].first - uses[i].first);
      ASSERT_LE(rl::int128{units} * r.window_us, allowed)
          << "seed " << seed << ": " << units << " units in [" << uses[i].first << ", "
          << uses[j].first << "]";
    }
  }
}

TYPED_TEST(LeaseHold, RandomProcessesNeverAdmitPastTheBucketsPromise) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    random_processes<TypeParam>(rate_of("10/s"), 300'000, seed);
    random_processes<TypeParam>(rate_of("7/3s", 5), 1'000'000, seed);
    random_processes<TypeParam>(rate_of("100/s", 30), 50'000, seed);
  }
}

}  // namespace
