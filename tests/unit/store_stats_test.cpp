// Store statistics through the C ABI: decisions by verdict and source,
// failures by status, the latency histogram's quantiles, and the
// Prometheus text.
#include "failover/store_stats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "capi_helpers.h"

namespace {

TEST(StoreStats, MemoryStoreCountsDecisions) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"algorithm", "gcra"}, {"limit", "3/h"}});
  for (int i = 0; i < 5; ++i) rl_test::acquire(lim.get(), "k", 1);
  rl_store_stats stats = RL_STORE_STATS_INIT;
  ASSERT_EQ(rl_store_get_stats(store.get(), &stats, nullptr), RL_OK);
  EXPECT_EQ(stats.allowed[RL_SOURCE_STORE], 3u);
  EXPECT_EQ(stats.denied[RL_SOURCE_STORE], 2u);
  EXPECT_EQ(stats.allowed[RL_SOURCE_FAIL_OPEN], 0u);
  EXPECT_EQ(stats.breaker_state, RL_BREAKER_CLOSED);
  EXPECT_EQ(stats.round_trips, 0u);

  const size_t length = rl_store_format_metrics(store.get(), nullptr, 0);
  std::string text(length + 1, '\0');
  ASSERT_EQ(rl_store_format_metrics(store.get(), text.data(), text.size()), length);
  text.resize(length);
  EXPECT_NE(text.find("rl_decisions_total{verdict=\"allowed\",source=\"store\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rl_breaker_state 0\n"), std::string::npos);
  // A short buffer gets a cut, terminated text and the whole length.
  char small[16];
  EXPECT_EQ(rl_store_format_metrics(store.get(), small, sizeof small), length);
  EXPECT_EQ(std::string(small), text.substr(0, 15));
}

TEST(StoreStats, MetricsInOneAllocatingCall) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "3/h"}});
  rl_test::acquire(lim.get(), "k", 1);
  const size_t length = rl_store_format_metrics(store.get(), nullptr, 0);
  char* text = rl_store_metrics(store.get());
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(std::strlen(text), length) << "the whole text, never a cut one";
  EXPECT_NE(std::string(text).find("rl_decisions_total{verdict=\"allowed\",source=\"store\"} 1\n"),
            std::string::npos)
      << text;
  rl_string_free(text);
  EXPECT_EQ(rl_store_metrics(nullptr), nullptr);
  rl_string_free(nullptr);
}

// A hot key's slices (as in conformance/fixed_window.yaml): the store sums
// its limiters' lease counts, in rl_store_stats and in the Prometheus text.
TEST(StoreStats, LeasesOfEveryLimiterOfTheStore) {
  auto store = rl_test::open_manual_store();
  const rl_test::SettingList settings = {{"algorithm", "fixed_window"},
                                         {"limit", "10/s"},
                                         {"lease", "auto"},
                                         {"lease_threshold", "20"},
                                         {"lease_share", "1/2"}};
  auto one = rl_test::make_limiter(store.get(), settings);
  auto two = rl_test::make_limiter(store.get(), settings);
  int allowed = 0;
  for (int i = 0; i < 12; ++i) allowed += rl_test::acquire(one.get(), "k", 1).allowed;
  for (int i = 0; i < 3; ++i) allowed += rl_test::acquire(two.get(), "k", 1).allowed;
  EXPECT_LE(allowed, 10);
  rl_store_stats stats = RL_STORE_STATS_INIT;
  ASSERT_EQ(rl_store_get_stats(store.get(), &stats, nullptr), RL_OK);
  EXPECT_GE(stats.leases_taken, 1u);
  EXPECT_GE(stats.lease_units_leased, stats.leases_taken);
  EXPECT_GE(stats.lease_decisions, 1u);
  EXPECT_LE(stats.lease_decisions, stats.lease_units_leased);
  EXPECT_LE(stats.lease_units_returned, stats.lease_units_unused);
  EXPECT_EQ(stats.allowed[RL_SOURCE_STORE], static_cast<uint64_t>(allowed))
      << "a decision from a slice counts as the store's";

  char* text = rl_store_metrics(store.get());
  ASSERT_NE(text, nullptr);
  const std::string metrics(text);
  rl_string_free(text);
  EXPECT_NE(metrics.find("rl_lease_taken_total " + std::to_string(stats.leases_taken) + "\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("rl_lease_decisions_total " + std::to_string(stats.lease_decisions) + "\n"),
      std::string::npos);
  for (const char* name : {"rl_lease_units_leased_total", "rl_lease_units_unused_total",
                           "rl_lease_units_returned_total"}) {
    EXPECT_NE(metrics.find(std::string("# TYPE ") + name + " counter\n"), std::string::npos)
        << name;
  }
}

// A caller built against the version-1 rl.h has a smaller struct: rl fills
// that much and not a byte past it.
TEST(StoreStats, VersionOneCallersGetTheirStructOnly) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "3/h"}});
  rl_test::acquire(lim.get(), "k", 1);
  rl_store_stats stats;
  std::memset(&stats, 0xAB, sizeof stats);
  ASSERT_EQ(rl_store_stats_init(&stats, 1, nullptr), RL_OK);
  EXPECT_EQ(stats.leases_taken, 0xABABABABABABABABu) << "init wrote past a version 1 struct";
  ASSERT_EQ(rl_store_get_stats(store.get(), &stats, nullptr), RL_OK);
  EXPECT_EQ(stats.version, 1u);
  EXPECT_EQ(stats.allowed[RL_SOURCE_STORE], 1u);
  EXPECT_EQ(stats.leases_taken, 0xABABABABABABABABu) << "get_stats wrote past a version 1 struct";
  EXPECT_EQ(stats.lease_decisions, 0xABABABABABABABABu);
}

TEST(StoreStats, BreakerStatesAreNamedByTheAbi) {
  EXPECT_STREQ(rl_breaker_state_name(RL_BREAKER_CLOSED), "closed");
  EXPECT_STREQ(rl_breaker_state_name(RL_BREAKER_OPEN), "open");
  EXPECT_STREQ(rl_breaker_state_name(RL_BREAKER_HALF_OPEN), "half_open");
  EXPECT_EQ(rl_breaker_state_name(-1), nullptr);
  EXPECT_EQ(rl_breaker_state_name(RL_BREAKER_STATE_COUNT), nullptr);
}

TEST(StoreStats, BadArgumentsNameThemselves) {
  auto store = rl_test::open_manual_store();
  rl_store_stats stats{};
  rl_error* err = nullptr;
  EXPECT_EQ(rl_store_get_stats(store.get(), &stats, &err), RL_E_INVALID_ARG);
  EXPECT_NE(std::string(rl_error_message(err)).find("out.version"), std::string::npos);
  rl_error_free(err);
  EXPECT_EQ(rl_store_get_stats(nullptr, &stats, nullptr), RL_E_INVALID_ARG);
  EXPECT_EQ(rl_store_get_stats(store.get(), nullptr, nullptr), RL_E_INVALID_ARG);
  EXPECT_EQ(rl_store_format_metrics(nullptr, nullptr, 0), 0u);
}

TEST(LatencyHistogram, QuantilesAreWithinABucket) {
  rl::LatencyHistogram h;
  for (int64_t v = 1; v <= 1000; ++v) h.record(v);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.max(), 1000);
  for (double q : {0.5, 0.95, 0.99}) {
    const double exact = q * 1000;
    EXPECT_GE(h.quantile(q), exact) << q;
    EXPECT_LE(h.quantile(q), exact * 1.125 + 1) << q;
  }
  EXPECT_EQ(h.quantile(1.0), 1000);
  EXPECT_EQ(rl::LatencyHistogram{}.quantile(0.5), 0);
  h.record(int64_t{1} << 40);  // beyond the last bucket: kept, capped
  EXPECT_EQ(h.max(), int64_t{1} << 40);
}

}  // namespace

namespace {

// A store of one node has one breaker, named by its address; memory:// none.
TEST(StoreStats, EachNodesBreakerThroughTheAbi) {
  auto memory = rl_test::open_manual_store();
  size_t count = 9;
  ASSERT_EQ(rl_store_get_node_breakers(memory.get(), nullptr, 0, &count, nullptr), RL_OK);
  EXPECT_EQ(count, 0u);

  // Port 1: nothing listens; one refused call opens the breaker.
  rl_store* raw = nullptr;
  ASSERT_EQ(
      rl_store_open("redis://127.0.0.1:1?clock=manual&breaker_failures=1", nullptr, &raw, nullptr),
      RL_OK);
  rl_test::StorePtr store(raw);
  rl_node_breaker breakers[2] = {};
  breakers[0].version = RL_NODE_BREAKER_VERSION;
  ASSERT_EQ(rl_store_get_node_breakers(store.get(), breakers, 2, &count, nullptr), RL_OK);
  ASSERT_EQ(count, 1u);
  EXPECT_STREQ(breakers[0].node, "127.0.0.1:1");
  EXPECT_EQ(breakers[0].state, RL_BREAKER_CLOSED);
  auto lim = rl_test::make_limiter(store.get(), {{"algorithm", "gcra"}, {"limit", "3/h"}});
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  rl_decision d = rl_test::blank_decision();
  EXPECT_EQ(rl_limiter_acquire(lim.get(), &req, &d, nullptr), RL_E_BACKEND_UNAVAILABLE);
  ASSERT_EQ(rl_store_get_node_breakers(store.get(), breakers, 2, &count, nullptr), RL_OK);
  EXPECT_EQ(breakers[0].state, RL_BREAKER_OPEN);
  EXPECT_EQ(breakers[0].opened, 1u);
  rl_store_stats stats = RL_STORE_STATS_INIT;
  ASSERT_EQ(rl_store_get_stats(store.get(), &stats, nullptr), RL_OK);
  EXPECT_EQ(stats.breaker_state, RL_BREAKER_OPEN) << "the store's: its one node's";

  rl_error* err = nullptr;
  rl_node_breaker unversioned{};
  EXPECT_EQ(rl_store_get_node_breakers(store.get(), &unversioned, 1, &count, &err),
            RL_E_INVALID_ARG);
  EXPECT_NE(std::string(rl_error_message(err)).find("out[0].version"), std::string::npos);
  rl_error_free(err);
  EXPECT_EQ(rl_store_get_node_breakers(store.get(), breakers, 2, nullptr, nullptr),
            RL_E_INVALID_ARG);
  EXPECT_EQ(rl_store_get_node_breakers(store.get(), nullptr, 1, &count, nullptr), RL_E_INVALID_ARG);
}

}  // namespace
