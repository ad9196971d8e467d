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
