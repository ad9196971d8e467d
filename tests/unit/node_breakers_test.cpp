// A store's breakers, one per node: one node's outages open only its own
// breaker; the store's state is the worst of the nodes that serve keys now,
// its count of openings every node's; the metrics name each node.
#include "failover/node_breakers.h"

#include <gtest/gtest.h>

#include "clock.h"

namespace rl {
namespace {

using Permit = CircuitBreaker::Permit;

struct Breakers : ::testing::Test {
  ManualClock clock{1000};
  NodeBreakers breakers{BreakerOptions{2, 500000}, clock};
  // Two masters of a Cluster: any stable addresses serve as their ids.
  const int a = 0;
  const int b = 0;
  std::vector<NodeInfo> serving{{&a, "10.0.0.1:7000"}, {&b, "10.0.0.2:7001"}};

  void outages(NodeId node, int n) {
    CircuitBreaker& breaker = breakers.of(node).breaker;
    for (int i = 0; i < n; ++i) breaker.on_outage(breaker.admit());
  }
  StatsView view() {
    StoreStats stats;
    StatsView v{&stats};
    breakers.fill(v, serving);
    v.stats = nullptr;
    return v;
  }
};

TEST_F(Breakers, OneNodesOutagesOpenOnlyItsBreaker) {
  outages(&a, 2);
  EXPECT_EQ(breakers.of(&a).breaker.admit(), Permit::reject);
  EXPECT_EQ(breakers.of(&b).breaker.admit(), Permit::call);
  EXPECT_EQ(&breakers.of(&a), &breakers.of(&a)) << "one breaker per node, kept";
}

TEST_F(Breakers, TheStoresStateIsTheWorstOfItsServingNodes) {
  EXPECT_EQ(view().breaker, BreakerState::closed);
  outages(&b, 2);
  StatsView v = view();
  EXPECT_EQ(v.breaker, BreakerState::open);
  EXPECT_EQ(v.breaker_opened, 1);
  ASSERT_EQ(v.nodes.size(), 2u);
  EXPECT_EQ(v.nodes[0].node, "10.0.0.1:7000");
  EXPECT_EQ(v.nodes[0].state, BreakerState::closed);
  EXPECT_EQ(v.nodes[1].state, BreakerState::open);
  EXPECT_EQ(v.nodes[1].opened, 1);
  clock.advance(500000);
  EXPECT_EQ(breakers.of(&b).breaker.admit(), Permit::probe);
  EXPECT_EQ(view().breaker, BreakerState::half_open);
  // A node no longer serving (its slots moved to a new master) leaves the
  // store's state, not its count of openings.
  serving.pop_back();
  EXPECT_EQ(view().breaker, BreakerState::closed);
  EXPECT_EQ(view().breaker_opened, 1);
}

TEST_F(Breakers, TheMetricsShowEachNodesBreaker) {
  outages(&a, 2);
  StoreStats stats;
  StatsView v{&stats};
  breakers.fill(v, serving);
  const std::string text = metrics_text(v);
  EXPECT_NE(text.find("rl_breaker_state 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rl_node_breaker_state{node=\"10.0.0.1:7000\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("rl_node_breaker_state{node=\"10.0.0.2:7001\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("rl_node_breaker_opened_total{node=\"10.0.0.1:7000\"} 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace rl
