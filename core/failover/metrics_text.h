// A store's statistics in the Prometheus text exposition format (0.0.4),
// written once here so that no binding formats them again.
#pragma once

#include <string>
#include <vector>

#include "circuit_breaker.h"
#include "store_stats.h"

namespace rl {

// One node's circuit breaker.
struct NodeBreakerView {
  std::string node;  // "host:port" (NodeInfo::address)
  BreakerState state = BreakerState::closed;
  int64_t opened = 0;  // times it opened
};

struct StatsView {
  const StoreStats* stats = nullptr;
  // The store's breaker: the worst of its nodes' (node_breakers.h), and
  // how often any of them opened.
  BreakerState breaker = BreakerState::closed;
  int64_t breaker_opened = 0;
  bool has_round_trips = false;          // memory:// has none
  std::vector<NodeBreakerView> nodes{};  // each node that serves keys now; none for memory://
  std::string decides_with{};            // decides_with_text(); empty for memory://
};

// Metric names start with "rl_"; every line ends in '\n'.
std::string metrics_text(const StatsView& view);

}  // namespace rl
