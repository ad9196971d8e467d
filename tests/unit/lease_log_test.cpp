// Leases on sliding_log (core/algorithms/sliding_log.h): a slice is recorded
// at its lease's end, so every window that holds a use of it holds its
// record (the log counts entries not yet begun). Exact steps on the struct,
// then random processes whose every use is checked against the log's
// promise: no window of the limit's length holds more than the limit.
#include "algorithms/sliding_log.h"
#include "core_helpers.h"
#include "lease_processes.h"

namespace {

using rl_test::rate_of;

using Log = rl_test::LeasedState<rl::SlidingLog>;

const std::deque<rl::SlidingLog::Entry>& entries(const Log& log) {
  return log.states[0].entries;
}

constexpr int64_t kSecond = 1'000'000;

// 10/s, leases of 100 ms.
TEST(LeaseLog, ASliceIsRecordedAtItsLeasesEndAndCountsAWindowFromThere) {
  Log log(rate_of("10/s"));
  const rl::Verdict grant = log.lease(0, 4, 100'000);
  ASSERT_TRUE(grant.allowed);
  EXPECT_EQ(grant.next_retry_after_us, 100'000);  // the tag: the record's instant
  EXPECT_EQ(grant.remaining, 6);
  EXPECT_EQ(grant.reset_after_us, 1'100'000);  // the record leaves a window after it
  ASSERT_EQ(entries(log).size(), 1u);
  EXPECT_EQ(entries(log).back().at, 100'000);
  // Before its instant the record already counts.
  EXPECT_EQ(log.peek(50'000).remaining, 6);
  // A use at 100 ms lies in every window up to 1.1 s: so does the record.
  EXPECT_EQ(log.peek(1'099'999).remaining, 6);
  EXPECT_EQ(log.peek(1'100'000).remaining, 10);
}

TEST(LeaseLog, CallsDuringTheLeaseJoinItsRecordAndTheLogStaysInOrder) {
  Log log(rate_of("10/s"));
  ASSERT_TRUE(log.acquire(0).allowed);
  ASSERT_TRUE(log.lease(10'000, 4, 100'000).allowed);
  const rl::Verdict plain = log.acquire(20'000, 2);
  ASSERT_TRUE(plain.allowed);
  EXPECT_EQ(plain.reset_after_us, 110'000 + kSecond - 20'000);
  ASSERT_EQ(entries(log).size(), 2u);
  EXPECT_EQ(entries(log).back().at, 110'000);
  EXPECT_EQ(entries(log).back().cost, 6);
  EXPECT_EQ(entries(log).back().total, 7);
  // A slice granted later, with a shorter lease, joins the same record.
  const rl::Verdict shorter = log.lease(30'000, 2, 50'000);
  ASSERT_TRUE(shorter.allowed);
  EXPECT_EQ(shorter.next_retry_after_us, 110'000);
  EXPECT_EQ(entries(log).size(), 2u);
  EXPECT_FALSE(log.acquire(40'000, 2).allowed);  // 9 of 10 counted
}

TEST(LeaseLog, AReleaseTakesTheUnusedUnitsOffItsRecordOnly) {
  Log log(rate_of("10/s"));
  ASSERT_TRUE(log.lease(0, 4, 100'000).allowed);       // record at 100 ms
  ASSERT_TRUE(log.lease(50'000, 3, 100'000).allowed);  // another process's, at 150 ms
  ASSERT_TRUE(log.acquire(60'000, 1).allowed);         // joins the newest record
  EXPECT_FALSE(log.release(100'000, 2, 99'999, 4));    // no record there
  EXPECT_TRUE(log.release(100'000, 2, 100'000, 4));    // 2 of the first slice's 4 unused
  EXPECT_EQ(log.peek(100'000).remaining, 4);
  ASSERT_EQ(entries(log).size(), 2u);
  EXPECT_EQ(entries(log)[0].cost, 2);
  EXPECT_EQ(entries(log)[1].total, 6);  // the later total lost them too
  // A record whose units are all returned leaves the log.
  EXPECT_TRUE(log.release(150'000, 3, 150'000, 3));
  EXPECT_EQ(log.peek(150'000).remaining, 7);
  EXPECT_TRUE(log.release(150'000, 2, 100'000, 4));
  ASSERT_EQ(entries(log).size(), 1u);
  EXPECT_EQ(entries(log)[0].at, 150'000);
  EXPECT_EQ(entries(log)[0].total, 1);
  EXPECT_EQ(log.peek(150'000).remaining, 9);
}

TEST(LeaseLog, AReleaseAfterItsRecordLeftOrAResetGivesNothing) {
  Log log(rate_of("10/s"));
  ASSERT_TRUE(log.lease(0, 4, 100'000).allowed);
  EXPECT_FALSE(log.release(1'100'000, 4, 100'000, 4));  // the record left the window
  EXPECT_EQ(log.peek(1'100'000).remaining, 10);
  ASSERT_TRUE(log.lease(2 * kSecond, 4, 100'000).allowed);
  log.run(rl::Op::reset, 2 * kSecond + 1, 0);
  ASSERT_TRUE(log.acquire(2 * kSecond + 2, 3).allowed);
  EXPECT_FALSE(log.release(2 * kSecond + 3, 4, 2 * kSecond + 100'000, 4));
  EXPECT_EQ(log.peek(2 * kSecond + 3).remaining, 7);
}

TEST(LeaseLog, ARefundNeverTakesUnitsOffARecordStampedAhead) {
  Log log(rate_of("10/s"));
  ASSERT_TRUE(log.acquire(0, 2).allowed);
  ASSERT_TRUE(log.lease(10'000, 4, 100'000).allowed);
  log.run(rl::Op::refund, 20'000, 2);  // the slice's record covers its uses: kept
  EXPECT_EQ(log.peek(20'000).remaining, 4);
  log.run(rl::Op::refund, 110'000, 2);  // its instant has come: the newest units go first
  EXPECT_EQ(log.peek(110'000).remaining, 6);
}

TEST(LeaseLog, ALeaseNeedsItsLength) {
  Log log(rate_of("10/s"));
  const rl::Verdict v = log.lease(0, 4, 0);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.remaining, 10);
  EXPECT_TRUE(entries(log).empty());
}

// Processes that lease, use and release (lease_processes.h) beside plain
// acquires: every used unit's time checked against the log's promise.
void random_processes(const rl::Rate& r, int64_t hold_us, uint32_t seed) {
  Log log(r);
  const rl_test::LeaseSteps how{4000, r.window_us / r.limit / 4, std::max<int64_t>(1, r.limit / 4),
                                std::max<int64_t>(1, r.limit / 3)};
  const std::vector<std::pair<int64_t, int64_t>> uses =
      rl_test::random_lease_uses(log, how, hold_us, seed);
  // Every window [t, t + window) from a use on holds at most the limit.
  for (size_t i = 0; i < uses.size(); ++i) {
    int64_t units = 0;
    for (size_t j = i; j < uses.size() && uses[j].first - uses[i].first < r.window_us; ++j) {
      units += uses[j].second;
    }
    ASSERT_LE(units, r.limit) << "seed " << seed << ": " << units << " units in [" << uses[i].first
                              << ", " << uses[i].first + r.window_us << ")";
  }
}

TEST(LeaseLog, RandomProcessesNeverAdmitPastTheLogsPromise) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    random_processes(rate_of("10/s"), 300'000, seed);
    random_processes(rate_of("7/3s"), 1'000'000, seed);
    random_processes(rate_of("100/s"), 50'000, seed);
  }
}

}  // namespace
