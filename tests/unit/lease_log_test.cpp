// Leases on sliding_log (core/algorithms/sliding_log.h): a slice is recorded
// at its lease's end, so every window that holds a use of it holds its
// record (the log counts entries not yet begun). Exact steps on the struct,
// then random processes whose every use is checked against the log's
// promise: no window of the limit's length holds more than the limit.
#include <random>

#include "algorithms/sliding_log.h"
#include "core_helpers.h"

namespace {

using rl_test::rate_of;

struct Log {
  explicit Log(rl::Rate rate) : rates{rate}, states(1) {}
  rl::Verdict run(rl::Op op, int64_t now, int64_t cost, const rl::LeaseArgs& lease = {}) {
    bool changed = false;
    return rl::apply<rl::SlidingLog>(op, states, rates, now, cost, changed, lease);
  }
  rl::Verdict acquire(int64_t now, int64_t cost = 1) { return run(rl::Op::acquire, now, cost); }
  rl::Verdict peek(int64_t now) { return run(rl::Op::peek, now, 0); }
  rl::Verdict lease(int64_t now, int64_t units, int64_t hold_us) {
    return run(rl::Op::lease, now, units, {0, 0, hold_us});
  }
  // True when the log still held the slice's record.
  bool release(int64_t now, int64_t unused, int64_t tag, int64_t slice) {
    return run(rl::Op::release, now, unused, {tag, slice, 0}).next_retry_after_us == 1;
  }
  const std::deque<rl::SlidingLog::Entry>& entries() const { return states[0].entries; }
  std::vector<rl::Rate> rates;
  std::vector<rl::SlidingLog::State> states;
};

constexpr int64_t kSecond = 1'000'000;

// 10/s, leases of 100 ms.
TEST(LeaseLog, ASliceIsRecordedAtItsLeasesEndAndCountsAWindowFromThere) {
  Log log(rate_of("10/s"));
  const rl::Verdict grant = log.lease(0, 4, 100'000);
  ASSERT_TRUE(grant.allowed);
  EXPECT_EQ(grant.next_retry_after_us, 100'000);  // the tag: the record's instant
  EXPECT_EQ(grant.remaining, 6);
  EXPECT_EQ(grant.reset_after_us, 1'100'000);  // the record leaves a window after it
  ASSERT_EQ(log.entries().size(), 1u);
  EXPECT_EQ(log.entries().back().at, 100'000);
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
  ASSERT_EQ(log.entries().size(), 2u);
  EXPECT_EQ(log.entries().back().at, 110'000);
  EXPECT_EQ(log.entries().back().cost, 6);
  EXPECT_EQ(log.entries().back().total, 7);
  // A slice granted later, with a shorter lease, joins the same record.
  const rl::Verdict shorter = log.lease(30'000, 2, 50'000);
  ASSERT_TRUE(shorter.allowed);
  EXPECT_EQ(shorter.next_retry_after_us, 110'000);
  EXPECT_EQ(log.entries().size(), 2u);
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
  ASSERT_EQ(log.entries().size(), 2u);
  EXPECT_EQ(log.entries()[0].cost, 2);
  EXPECT_EQ(log.entries()[1].total, 6);  // the later total lost them too
  // A record whose units are all returned leaves the log.
  EXPECT_TRUE(log.release(150'000, 3, 150'000, 3));
  EXPECT_EQ(log.peek(150'000).remaining, 7);
  EXPECT_TRUE(log.release(150'000, 2, 100'000, 4));
  ASSERT_EQ(log.entries().size(), 1u);
  EXPECT_EQ(log.entries()[0].at, 150'000);
  EXPECT_EQ(log.entries()[0].total, 1);
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
  EXPECT_TRUE(log.entries().empty());
}

// Processes that lease, use their slices until their lease ends (no later
// than grant + hold), release the rest or not (a process that died), beside
// plain acquires and refunds of nothing: every used unit's time checked
// against the log's promise.
void random_processes(const rl::Rate& r, int64_t hold_us, uint32_t seed) {
  struct Slice {
    int64_t size = 0, left = 0, tag = 0, until = 0;
  };
  std::mt19937 rng(seed);
  Log log(r);
  std::vector<Slice> slices(4);
  std::vector<std::pair<int64_t, int64_t>> uses;  // time, units
  int64_t now = 0;
  for (int step = 0; step < 4000; ++step) {
    const int64_t pause = rng() % 6 == 0 ? hold_us : r.window_us / r.limit / 4;
    now += std::uniform_int_distribution<int64_t>(0, pause)(rng);
    Slice& s = slices[rng() % slices.size()];
    if (s.size > 0 && (now >= s.until || s.left == 0)) {
      if (rng() % 8 != 0) log.release(now, s.left, s.tag, s.size);  // 1 in 8 dies
      s = Slice{};
    }
    const int64_t cost = s.left > 0 && rng() % 4 == 0
                             ? s.left
                             : 1 + static_cast<int64_t>(rng() % std::max<int64_t>(1, r.limit / 4));
    if (s.size > 0 && s.left >= cost) {
      s.left -= cost;
      uses.emplace_back(now, cost);
    } else if (rng() % 3 == 0) {
      if (log.acquire(now, cost).allowed) uses.emplace_back(now, cost);
    } else if (s.size == 0) {
      const int64_t size = 1 + static_cast<int64_t>(rng() % std::max<int64_t>(1, r.limit / 3));
      const rl::Verdict v = log.lease(now, size, hold_us);
      if (v.allowed) s = Slice{size, size, v.next_retry_after_us, now + hold_us};
    }
  }
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
