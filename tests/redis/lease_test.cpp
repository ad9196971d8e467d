// Leases (lease=auto, core/lease/): a hot key takes a slice of its limit in
// one store call and decides from it in process. Several stores on one
// Redis stand for processes sharing a key: checked from the admissions'
// times, no window ever holds more than the algorithm allows, and what is
// not admitted while demand exceeds the limit is at most the slices left
// unused (gcra and token_bucket: held out of the bucket until released).
// Algorithms that cannot lease exactly are refused by name.
#include <sys/wait.h>

#include <ctime>
#include <map>
#include <mutex>
#include <thread>

#include "fault_proxy.h"
#include "redis_env.h"

namespace rl::test {
namespace {

constexpr int64_t kStartUs = 1'700'000'000'000'000;  // a multiple of every window here

Settings leased(const std::string& algorithm, const std::string& limit,
                const std::string& threshold = "20", const std::string& name = "t") {
  Settings s = limiter_settings(algorithm, limit, name);
  s.set("lease", "auto");
  s.set("lease_ms", "50");
  s.set("lease_threshold", threshold);
  s.set("lease_share", "1/10");
  return s;
}

std::string refusal(const Settings& settings) {
  try {
    Limiter limiter(open_store("memory://", {}), settings);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_arg);
    return e.what();
  }
  return "(accepted)";
}

TEST(LeaseSettings, AreInTheSettingsTableAndOffByDefault) {
  for (const char* name : {"lease", "lease_ms", "lease_threshold", "lease_share"}) {
    const SettingInfo* info = find_setting(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->scope, Scope::limiter) << name;
  }
  EXPECT_STREQ(find_setting("lease")->default_value, "off");
  EXPECT_FALSE(Settings().limiter().lease.on);
}

TEST(LeaseSettings, AlgorithmsThatCannotLeaseExactlyAreRefusedByName) {
  const std::string message = refusal(leased("suppressed", "100/s"));
  EXPECT_NE(message.find("lease: algorithm suppressed cannot lease exactly"), std::string::npos)
      << message;
  EXPECT_NE(refusal(leased("fixed_window", "100/s, 1000/m"))
                .find("lease: lease=auto takes one "
                      "limit; 'limit' has 2"),
            std::string::npos);
  Settings off = limiter_settings("fixed_window", "100/s");
  off.set("lease_ms", "20");
  EXPECT_NE(refusal(off).find("lease_ms: applies only with lease=auto"), std::string::npos);
  Settings bad;
  EXPECT_THROW(bad.set("lease", "on"), Error);
  EXPECT_THROW(bad.set("lease_share", "2"), Error);
  EXPECT_THROW(bad.set("lease_ms", "0"), Error);
  EXPECT_EQ(refusal(leased("fixed_window", "100/s")), "(accepted)");
  EXPECT_EQ(refusal(leased("sliding_window", "100/s")), "(accepted)");
  EXPECT_EQ(refusal(leased("gcra", "100/s")), "(accepted)");
  EXPECT_EQ(refusal(leased("token_bucket", "100/s")), "(accepted)");
  EXPECT_EQ(refusal(leased("sliding_log", "100/s")), "(accepted)");
}

// One process, manual clock: the slice is counted in Redis at once, the
// calls it serves make no store call and say what is true of it.
TEST(Lease, AHotKeyDecidesFromItsSliceAndRedisCountsTheSlice) {
  auto store = open_redis("clock=manual");
  manual_clock(*store).set(kStartUs + 200'000);
  Limiter limiter(store, leased("fixed_window", "1000/s", "100"));  // 5 units per 50 ms
  Limiter plain(store, limiter_settings("fixed_window", "1000/s"));
  int64_t admitted = 0;
  Verdict last;
  for (int i = 0; i < 40; ++i) {
    const Outcome o = limiter.run(Op::acquire, "hot", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    ASSERT_TRUE(o.verdict.allowed);
    EXPECT_EQ(o.verdict.limit, 1000);
    EXPECT_EQ(o.verdict.retry_after_us, 0);
    EXPECT_EQ(o.verdict.reset_after_us, 800'000);  // the window's end
    ++admitted;
    last = o.verdict;
  }
  const LeaseCounts c = limiter.lease_stats();
  EXPECT_GE(c.leases_taken, 2u);
  EXPECT_GE(c.decisions, 20u);
  EXPECT_EQ(c.units_unused, 0u);
  // The store's total (rl_store_stats) adds up its limiters' leases.
  const LeaseCounts total = store->stats()->leases.snapshot();
  EXPECT_EQ(total.leases_taken, c.leases_taken);
  EXPECT_EQ(total.decisions, c.decisions);
  // Redis counts every admission and the slice's unused rest.
  const Outcome peek = plain.run(Op::peek, "hot", 0);
  ASSERT_EQ(peek.code, Code::ok);
  EXPECT_EQ(peek.verdict.remaining, 1000 - admitted - last.remaining);
  EXPECT_EQ(c.units_leased + (40 - c.decisions - c.leases_taken), 40u + last.remaining);
}

TEST(Lease, EndsAtTheWindowsEdgeAndAfterLeaseMs) {
  auto store = open_redis("clock=manual");
  ManualClock& clock = manual_clock(*store);
  clock.set(kStartUs + 990'000);  // 10 ms before the window's edge
  Limiter limiter(store, leased("fixed_window", "1000/s", "100"));
  Limiter plain(store, limiter_settings("fixed_window", "1000/s"));
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  const LeaseCounts before = limiter.lease_stats();
  ASSERT_GE(before.leases_taken, 1u);
  clock.set(kStartUs + 1'000'000);  // the edge: the slice is not used in the new window
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  ASSERT_TRUE(o.verdict.allowed);
  EXPECT_EQ(limiter.lease_stats().decisions, before.decisions);
  // The new window counts that call and what is left of a slice it took.
  EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining + o.verdict.remaining, 999);
  // A slice taken in the new window ends lease_ms later, its rest unused.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  const LeaseCounts mid = limiter.lease_stats();
  ASSERT_GT(mid.leases_taken, before.leases_taken);
  const int64_t left = 1000 - plain.run(Op::peek, "k", 0).verdict.remaining - 21;
  ASSERT_GT(left, 0);
  clock.advance(50'000);
  ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  EXPECT_EQ(limiter.lease_stats().decisions, mid.decisions);
  EXPECT_EQ(limiter.lease_stats().units_unused, mid.units_unused + static_cast<uint64_t>(left));
}

// A key held at its limit, where a slice rarely fits: after a denied grant
// the key asks again no sooner than lease_ms later, doubled per denial in a
// row, so the grants it sends in vain stay few.
TEST(Lease, ADeniedGrantIsAskedAgainAfterLeaseMsDoubledPerDenialInARow) {
  auto store = open_redis("clock=manual");
  ManualClock& clock = manual_clock(*store);
  clock.set(kStartUs);
  Limiter plain(store, limiter_settings("fixed_window", "10/s"));
  Settings settings = leased("fixed_window", "10/s", "20");  // 1 unit per 50 ms
  settings.set("lease_share", "1/2");                        // slices of up to 5
  Limiter limiter(store, settings);
  ASSERT_TRUE(plain.run(Op::acquire, "k", 9).verdict.allowed);
  auto trips = [&] { return store->stats()->round_trips.count(); };
  auto trips_of_a_call = [&](bool allowed) {
    const uint64_t before = trips();
    EXPECT_EQ(limiter.run(Op::acquire, "k", 1).verdict.allowed, allowed);
    return trips() - before;
  };
  EXPECT_EQ(trips_of_a_call(true), 1u);   // the store's: the key's first call
  EXPECT_EQ(trips_of_a_call(false), 2u);  // a grant, denied; then the call alone
  clock.advance(50'000);                  // lease_ms on: it asks again, denied again
  EXPECT_EQ(trips_of_a_call(false), 2u);
  clock.advance(50'000);  // within 2 * lease_ms of that denial: no grant
  EXPECT_EQ(trips_of_a_call(false), 1u);
  // 2 * lease_ms after it, it asks again once this period's demand is there
  // (the rate seen fell to a call per lease_ms: no slice for one call).
  clock.advance(50'000);
  EXPECT_EQ(trips_of_a_call(false), 1u);
  EXPECT_EQ(trips_of_a_call(false), 2u);
  EXPECT_EQ(limiter.lease_stats().leases_taken, 0u);
}

TEST(Lease, ARefundReturnsToTheSliceAndAResetEndsIt) {
  auto store = open_redis("clock=manual");
  manual_clock(*store).set(kStartUs);
  Limiter limiter(store, leased("sliding_window", "1000/s", "100"));
  Outcome o;
  for (int i = 0; i < 8; ++i) o = limiter.run(Op::acquire, "k", 1);
  ASSERT_GE(limiter.lease_stats().leases_taken, 1u);
  const uint64_t decided = limiter.lease_stats().decisions;
  o = limiter.run(Op::acquire, "k", 1);
  ASSERT_EQ(limiter.lease_stats().decisions, decided + 1);
  const Outcome refunded = limiter.run(Op::refund, "k", 1);
  EXPECT_EQ(refunded.verdict.remaining, o.verdict.remaining + 1);  // back in the slice
  // A refund larger than the slice has served ends the lease and goes to Redis.
  const Outcome big = limiter.run(Op::refund, "k", 500);
  ASSERT_EQ(big.code, Code::ok);
  EXPECT_EQ(big.verdict.remaining, 1000);
  for (int i = 0; i < 8; ++i) o = limiter.run(Op::acquire, "k", 1);
  ASSERT_GT(limiter.lease_stats().decisions, decided + 1);
  ASSERT_EQ(limiter.run(Op::reset, "k", 0).code, Code::ok);
  const uint64_t after_reset = limiter.lease_stats().decisions;
  limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(limiter.lease_stats().decisions, after_reset);  // the slice went with the reset
}

// A lease's end hands its unused units back (Op::release), on memory://,
// Redis's Lua path and the module alike; the store takes them off only in
// the window the slice was counted in and the state it was counted in.
class LeaseEnd : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<Store> open() {
    const std::string& where = GetParam();
    if (where == "memory") return open_store("memory://?clock=manual", {});
    if (where == "lua") return open_redis("clock=manual&script_mode=functions");
    const char* url = std::getenv("RL_TEST_REDIS_MODULE_URL");
    if (url == nullptr) return nullptr;
    return open_store(std::string(url) + "?prefix=" + unique_prefix() + "&clock=manual", {});
  }
};

// sliding_window with 250 ms sub-windows: the lease ends at the sub-window's
// edge too, and its rest comes off that sub-window's counter after it.
TEST_P(LeaseEnd, ByTimeTheUnusedRestGoesBackInTheSameWindow) {
  for (const char* algorithm :
       {"fixed_window", "sliding_window", "sliding_window/250ms", "sliding_log"}) {
    auto store = open();
    if (!store) GTEST_SKIP() << "RL_TEST_REDIS_MODULE_URL is not set";
    ManualClock& clock = manual_clock(*store);
    clock.set(kStartUs + 200'000);
    const std::string name(algorithm);
    const std::string algo = name.substr(0, name.find('/'));
    Settings lease = leased(algo, "1000/s", "100");  // 5 units per 50 ms
    Settings settings = limiter_settings(algo, "1000/s");
    if (name.find('/') != std::string::npos) {
      lease.set("granularity", "250ms");
      settings.set("granularity", "250ms");
    }
    Limiter limiter(store, lease);
    Limiter plain(store, settings);
    int64_t admitted = 0;
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
      ++admitted;
    }
    const LeaseCounts before = limiter.lease_stats();
    ASSERT_GE(before.leases_taken, 2u) << algorithm;
    EXPECT_EQ(before.units_returned, before.units_unused) << algorithm;
    clock.advance(50'000);  // the lease ends: its rest goes back before the next slice
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    ASSERT_TRUE(o.verdict.allowed);
    ++admitted;
    const LeaseCounts after = limiter.lease_stats();
    EXPECT_GT(after.units_unused, before.units_unused) << algorithm;
    EXPECT_EQ(after.units_returned, after.units_unused) << algorithm;
    EXPECT_EQ(store->stats()->leases.snapshot().units_returned, after.units_returned);
    // The store counts the admissions and the live slice's rest, nothing more.
    EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - admitted - o.verdict.remaining)
        << algorithm;
  }
}

TEST_P(LeaseEnd, PastTheWindowsEdgeOrAfterAResetNothingIsTakenOff) {
  auto store = open();
  if (!store) GTEST_SKIP() << "RL_TEST_REDIS_MODULE_URL is not set";
  ManualClock& clock = manual_clock(*store);
  clock.set(kStartUs + 990'000);  // 10 ms before the window's edge
  Limiter a(store, leased("fixed_window", "1000/s", "100"));
  Limiter plain(store, limiter_settings("fixed_window", "1000/s"));
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(a.run(Op::acquire, "k", 1).verdict.allowed);
  const LeaseCounts before = a.lease_stats();
  ASSERT_GE(before.leases_taken, 1u);
  clock.set(kStartUs + 1'000'000);  // the edge: the rest is counted in a window now gone
  plain.run(Op::acquire, "k", 1);
  const Outcome o = a.run(Op::acquire, "k", 1);
  ASSERT_TRUE(o.verdict.allowed);
  EXPECT_GT(a.lease_stats().units_unused, before.units_unused);
  EXPECT_EQ(a.lease_stats().units_returned, before.units_returned);  // nothing in the new one
  EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - 2 - o.verdict.remaining);
  // Another process resets the key and takes a slice of its own: a's
  // return, tagged with its grant, must not take b's units off.
  const uint64_t returned = a.lease_stats().units_returned;
  ASSERT_EQ(plain.run(Op::reset, "k", 0).code, Code::ok);
  clock.advance(1);
  Limiter b(store, leased("fixed_window", "1000/s", "100", "t"));
  int64_t by_b = 0;
  Outcome last;
  for (int i = 0; i < 12; ++i) {
    last = b.run(Op::acquire, "k", 1);
    ASSERT_TRUE(last.verdict.allowed);
    ++by_b;
  }
  ASSERT_GE(b.lease_stats().leases_taken, 1u);
  clock.advance(50'000);  // a's lease is over: its next acquire ends it
  const Outcome end_a = a.run(Op::acquire, "k", 1);
  ASSERT_TRUE(end_a.verdict.allowed);
  EXPECT_EQ(a.lease_stats().units_returned, returned);
  // What b holds unused stays counted: the store saw by_b + 1 admissions,
  // b's slice's rest and a's new slice's.
  EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining,
            1000 - by_b - 1 - last.verdict.remaining - end_a.verdict.remaining);
}

// sliding_log records a slice at its lease's end (lease_ms after the
// grant): it counts from before that instant until a window after it, so a
// use late in the lease is covered as long as it counts.
TEST_P(LeaseEnd, ALogsSliceCountsUntilAWindowAfterItsLeasesEnd) {
  auto store = open();
  if (!store) GTEST_SKIP() << "RL_TEST_REDIS_MODULE_URL is not set";
  ManualClock& clock = manual_clock(*store);
  clock.set(kStartUs);
  Limiter limiter(store, leased("sliding_log", "1000/s", "100"));  // 5 units per 50 ms
  Limiter plain(store, limiter_settings("sliding_log", "1000/s"));
  Outcome o;
  for (int i = 0; i < 10; ++i) {
    o = limiter.run(Op::acquire, "k", 1);
    ASSERT_TRUE(o.verdict.allowed);
  }
  const LeaseCounts c = limiter.lease_stats();
  ASSERT_GE(c.leases_taken, 1u);
  // Every slice of the one instant goes to the one record; the calls that
  // asked for them were served from them.
  const int64_t slice = static_cast<int64_t>(c.units_leased);
  const int64_t plain_calls = 10 - static_cast<int64_t>(c.decisions + c.leases_taken);
  EXPECT_EQ(o.verdict.reset_after_us, 1'050'000);  // the record leaves a window after the lease
  EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - plain_calls - slice);
  // A window after the plain calls, the slice's record still counts.
  clock.set(kStartUs + 1'000'000);
  EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - slice);
  clock.set(kStartUs + 1'049'999);
  EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - slice);
  clock.set(kStartUs + 1'050'000);
  EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000);
  // The lease's end finds its record gone: nothing is taken off.
  ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  EXPECT_EQ(limiter.lease_stats().units_returned, 0u);
  EXPECT_GT(limiter.lease_stats().units_unused, 0u);
}

TEST_P(LeaseEnd, TheLimitersEndHandsItsSliceBack) {
  // gcra and token_bucket: the release takes the slice's hold off too, so
  // the bucket is as if only the admitted units were taken.
  for (const char* algorithm : {"sliding_window", "sliding_log", "gcra", "token_bucket"}) {
    auto store = open();
    if (!store) GTEST_SKIP() << "RL_TEST_REDIS_MODULE_URL is not set";
    manual_clock(*store).set(kStartUs + 200'000);
    Limiter plain(store, limiter_settings(algorithm, "1000/s"));
    int64_t left = 0;
    {
      Limiter limiter(store, leased(algorithm, "1000/s", "100"));
      Outcome o;
      for (int i = 0; i < 30; ++i) o = limiter.run(Op::acquire, "k", 1);
      left = o.verdict.remaining;
      ASSERT_GT(left, 0) << algorithm;
      ASSERT_GE(limiter.lease_stats().leases_taken, 2u) << algorithm;
      EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - 30 - left) << algorithm;
    }
    // The release went out async: the store's total says when it was taken.
    for (int i = 0;
         i < 2000 && store->stats()->leases.snapshot().units_returned < static_cast<uint64_t>(left);
         ++i) {
      std::this_thread::yield();
      plain.run(Op::peek, "k", 0);
    }
    EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - 30) << algorithm;
    if (std::string(algorithm) == "gcra" || std::string(algorithm) == "token_bucket") {
      // No hold left: 10 ms refill 10 units, up to the capacity.
      manual_clock(*store).advance(10'000);
      EXPECT_EQ(plain.run(Op::peek, "k", 0).verdict.remaining, 1000 - 20) << algorithm;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, LeaseEnd, ::testing::Values("memory", "lua", "module"));

TEST(Lease, ASliceHeldStaysValidWhenRedisFailsAndNoLonger) {
  FaultProxy proxy(std::stoi(env_or_fail("RL_TEST_REDIS_PORT")));
  auto store = open_store(
      "redis://127.0.0.1:" + std::to_string(proxy.port()) +
          "?clock=manual&timeout_ms=200&connect_timeout_ms=100&prefix=" + unique_prefix(),
      {});
  manual_clock(*store).set(kStartUs);
  Limiter limiter(store, leased("fixed_window", "100000/s", "1000"));  // slices of up to 10000
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  ASSERT_GE(limiter.lease_stats().leases_taken, 1u);
  proxy.go_down();
  const uint64_t decided = limiter.lease_stats().decisions;
  Outcome o = limiter.run(Op::acquire, "k", 1);
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_TRUE(o.verdict.allowed);
  EXPECT_EQ(o.verdict.source, Source::store);
  EXPECT_EQ(limiter.lease_stats().decisions, decided + 1);
  manual_clock(*store).advance(50'000);  // the lease has ended: on_failure=closed applies
  o = limiter.run(Op::acquire, "k", 1);
  EXPECT_TRUE(o.code == Code::backend_unavailable || o.code == Code::timeout) << o.message;
}

// Demand `times` the limit from `processes` stores on one key, each
// calling in turn under clocks set alike: every admission's time. Bursty:
// each process calls at twice that rate for 30 ms, then not for 30 ms, out
// of step with the others. times = 0: around the first window's edge only,
// at 1,000/s per process, from 40 ms to 5 ms before it (under the limit,
// and slices are left over at the edge) and for 100 ms after it (past the
// limit: a slice used across the edge would show).
std::vector<int64_t> admissions(const std::string& algorithm, const std::string& extra, int times,
                                bool bursty, int processes, int64_t limit, int seconds,
                                LeaseCounts& counts) {
  const std::string prefix = unique_prefix();
  std::vector<std::shared_ptr<Store>> stores;
  std::vector<std::unique_ptr<Limiter>> limiters;
  for (int p = 0; p < processes; ++p) {
    stores.push_back(open_store(redis_url("clock=manual", prefix), {}));
    Settings s = leased(algorithm, std::to_string(limit) + "/s", "20", "shared");
    if (!extra.empty()) s.set("granularity", extra);
    limiters.push_back(std::make_unique<Limiter>(stores.back(), s));
  }
  // Each process's interval between calls.
  const int64_t step =
      times == 0 ? 1000 : 1'000'000 / ((bursty ? 2 : 1) * times * limit / processes);
  std::vector<int64_t> times_admitted;
  for (int64_t t = kStartUs; t < kStartUs + seconds * 1'000'000; t += step) {
    for (int p = 0; p < processes; ++p) {
      if (bursty && ((t - kStartUs) / 1000 + 17 * p) % 60 >= 30) continue;
      const int64_t at = t - kStartUs;
      if (times == 0 && (at < 960'000 || (at >= 995'000 && at < 1'000'000) || at >= 1'100'000)) {
        continue;
      }
      manual_clock(*stores[p]).set(t);
      const Outcome o = limiters[p]->run(Op::acquire, "shared", 1);
      EXPECT_EQ(o.code, Code::ok) << o.message;
      if (o.verdict.allowed) times_admitted.push_back(t);
    }
  }
  counts = {};
  for (auto& l : limiters) {
    const LeaseCounts c = l->lease_stats();
    counts.leases_taken += c.leases_taken;
    counts.units_leased += c.units_leased;
    counts.units_unused += c.units_unused;
    counts.decisions += c.decisions;
  }
  return times_admitted;
}

// sliding_window's promise, checked after every admission: the sub-windows
// fully inside the window plus the straddling one, weighted, hold at most
// the limit.
void expect_sliding_window_kept(const std::vector<int64_t>& times, int64_t limit, int64_t window,
                                int64_t g) {
  std::map<int64_t, int64_t> counts;  // sub-window -> admissions
  const int64_t n = window / g;
  for (int64_t t : times) {
    ++counts[t / g];
    const int64_t current = t / g, offset = t % g;
    int64_t full = 0;
    for (int64_t b = current - n + 1; b <= current; ++b) full += counts.count(b) ? counts[b] : 0;
    const int64_t partial = counts.count(current - n) ? counts[current - n] : 0;
    const int64_t weighted = (partial * (g - offset) + g - 1) / g;
    ASSERT_LE(full + weighted, limit) << "at " << t - kStartUs << " us";
  }
}

struct Demand {
  const char* algorithm;
  const char* granularity;  // sliding_window: "" for the window
  int times;
  bool bursty = false;
};

class LeaseExactness : public ::testing::TestWithParam<Demand> {};

TEST_P(LeaseExactness, FourStoresOnOneKeyNeverAdmitPastTheLimit) {
  const Demand d = GetParam();
  constexpr int kProcesses = 4, kSeconds = 3;
  constexpr int64_t kLimit = 200, kMaxSlice = kLimit / 10;
  LeaseCounts counts;
  const std::vector<int64_t> times = admissions(d.algorithm, d.granularity, d.times, d.bursty,
                                                kProcesses, kLimit, kSeconds, counts);
  EXPECT_GT(counts.leases_taken, 0u);
  EXPECT_GT(counts.decisions, 0u);
  if (std::string(d.algorithm) == "fixed_window") {
    std::map<int64_t, int64_t> per_window;
    for (int64_t t : times) ++per_window[t / 1'000'000];
    ASSERT_EQ(per_window.size(), d.times == 0 ? 2u : static_cast<size_t>(kSeconds));
    for (const auto& [window, admitted] : per_window) {
      EXPECT_LE(admitted, kLimit) << "window " << window;
      if (d.times == 0) continue;
      // Under-admission: at most the slices outstanding at the window's end.
      EXPECT_GE(admitted, kLimit - kProcesses * kMaxSlice) << "window " << window;
    }
  } else {
    const int64_t g = std::string(d.granularity).empty() ? 1'000'000 : 250'000;
    expect_sliding_window_kept(times, kLimit, 1'000'000, g);
    if (d.times != 0) {
      EXPECT_GE(static_cast<int64_t>(times.size()), kLimit * (kSeconds - 1));
    }
  }
}

std::string demand_name(const ::testing::TestParamInfo<Demand>& info) {
  return std::string(info.param.algorithm) + (*info.param.granularity ? "_g250ms_" : "_") +
         (info.param.times == 0 ? std::string("edges") : std::to_string(info.param.times) + "x") +
         (info.param.bursty ? "_bursty" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Demands, LeaseExactness,
    ::testing::Values(Demand{"fixed_window", "", 2}, Demand{"fixed_window", "", 20},
                      Demand{"sliding_window", "", 2}, Demand{"sliding_window", "", 20},
                      Demand{"sliding_window", "250ms", 2}, Demand{"sliding_window", "250ms", 20},
                      Demand{"fixed_window", "", 2, true}, Demand{"fixed_window", "", 20, true},
                      Demand{"sliding_window", "250ms", 2, true},
                      Demand{"sliding_window", "250ms", 20, true}, Demand{"fixed_window", "", 0},
                      Demand{"sliding_window", "", 0}, Demand{"sliding_window", "250ms", 0}),
    demand_name);

// Real processes, real clock.
constexpr int kProcesses = 4;
constexpr int kThreads = 2;

void write_all(int fd, const void* data, size_t n) {
  if (write(fd, data, n) != static_cast<ssize_t>(n)) _exit(3);
}
void read_all(int fd, void* data, size_t n) {
  if (read(fd, data, n) != static_cast<ssize_t>(n)) _exit(4);
}

int64_t wall_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000 + ts.tv_nsec / 1000;
}

// What a process reports: its admissions, what its leases did, and each
// admission's wall-clock interval (before and after the call; the Redis
// server on this host reads the same clock).
struct Report {
  int64_t admitted = 0;
  LeaseCounts counts;
  std::vector<std::pair<int64_t, int64_t>> intervals;
};

[[noreturn]] void worker(const std::string& url, const std::string& limit, int attempts,
                         int64_t run_until_us, int to_parent) {
  Report r;
  try {
    auto store = open_store(url, {});
    Limiter limiter(store, leased("fixed_window", limit, "1", "shared"));
    std::mutex m;
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        std::vector<std::pair<int64_t, int64_t>> mine;
        for (int i = 0; i < attempts || wall_us() < run_until_us; ++i) {
          if (attempts > 0 && i >= attempts) break;
          const int64_t before = wall_us();
          const Outcome o = limiter.run(Op::acquire, "shared", 1);
          if (o.code != Code::ok) ++errors;
          if (o.verdict.allowed) mine.emplace_back(before, wall_us());
        }
        std::lock_guard lock(m);
        r.intervals.insert(r.intervals.end(), mine.begin(), mine.end());
      });
    }
    for (auto& t : threads) t.join();
    if (errors > 0) _exit(2);
    r.admitted = static_cast<int64_t>(r.intervals.size());
    r.counts = limiter.lease_stats();
    store->close();
  } catch (...) {
    _exit(5);
  }
  const size_t n = r.intervals.size();
  write_all(to_parent, &r.admitted, sizeof r.admitted);
  write_all(to_parent, &r.counts, sizeof r.counts);
  write_all(to_parent, &n, sizeof n);
  write_all(to_parent, r.intervals.data(), n * sizeof r.intervals[0]);
  _exit(0);
}

std::vector<Report> run_workers(const std::string& limit, int attempts, int64_t run_until_us) {
  const std::string url = redis_url("", unique_prefix());
  std::vector<std::pair<pid_t, int>> children;
  for (int p = 0; p < kProcesses; ++p) {
    int up[2];
    if (pipe(up) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid == 0) {
      close(up[0]);
      worker(url, limit, attempts, run_until_us, up[1]);
    }
    close(up[1]);
    children.emplace_back(pid, up[0]);
  }
  std::vector<Report> reports;
  for (auto [pid, fd] : children) {
    Report r;
    size_t n = 0;
    read_all(fd, &r.admitted, sizeof r.admitted);
    read_all(fd, &r.counts, sizeof r.counts);
    read_all(fd, &n, sizeof n);
    r.intervals.resize(n);
    read_all(fd, r.intervals.data(), n * sizeof r.intervals[0]);
    reports.push_back(std::move(r));
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a worker failed: " << status;
    close(fd);
  }
  return reports;
}

// A window longer than the run: the total is at most the limit, and short
// of it by exactly the units left unused in slices (at most one slice per
// process), at 2x and 20x the limit.
TEST(LeaseProcesses, AWindowLongerThanTheRunAdmitsTheLimitLessTheUnusedSlices) {
  constexpr int64_t kLimit = 400, kMaxSlice = kLimit / 10;
  for (int times : {2, 20}) {
    SCOPED_TRACE(std::to_string(times) + "x");
    const int attempts = static_cast<int>(times * kLimit / (kProcesses * kThreads));
    int64_t admitted = 0, unused = 0, leases = 0;
    for (const Report& r : run_workers(std::to_string(kLimit) + "/1d", attempts, 0)) {
      admitted += r.admitted;
      leases += static_cast<int64_t>(r.counts.leases_taken);
      // Units leased, not used and still counted: the units_unused of ended
      // leases the store did not take back (units_returned) and the rest of
      // the one held when the process stopped (its store closed first).
      unused += static_cast<int64_t>(r.counts.units_leased - r.counts.decisions -
                                     r.counts.leases_taken - r.counts.units_returned);
    }
    EXPECT_GT(leases, 0);
    EXPECT_LE(admitted, kLimit);
    EXPECT_EQ(admitted + unused, kLimit);
    EXPECT_LE(unused, kProcesses * kMaxSlice);
  }
}

// Short windows in real time, as fast as the processes go: no window holds
// more than the limit, counting only admissions whose whole call fell in it.
TEST(LeaseProcesses, ShortWindowsInRealTimeNeverHoldMoreThanTheLimit) {
  constexpr int64_t kLimit = 100, kWindowUs = 100'000;
  const std::vector<Report> reports = run_workers("100/100ms", 0, wall_us() + 1'000'000);
  std::map<int64_t, int64_t> surely_in;
  int64_t admitted = 0, decisions = 0, first = INT64_MAX, last = 0;
  for (const Report& r : reports) {
    admitted += r.admitted;
    decisions += static_cast<int64_t>(r.counts.decisions);
    for (auto [before, after] : r.intervals) {
      if (before / kWindowUs == after / kWindowUs) ++surely_in[before / kWindowUs];
      first = std::min(first, before);
      last = std::max(last, after);
    }
  }
  EXPECT_GT(decisions, 0);
  for (const auto& [window, n] : surely_in) EXPECT_LE(n, kLimit) << "window " << window;
  // In all, at most the limit per window the admissions touched.
  EXPECT_LE(admitted, kLimit * (last / kWindowUs - first / kWindowUs + 1));
}

}  // namespace
}  // namespace rl::test
