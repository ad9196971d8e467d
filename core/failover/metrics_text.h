// A store's statistics in the Prometheus text exposition format (0.0.4),
// written once here so that no binding formats them again.
#pragma once

#include <string>

#include "circuit_breaker.h"
#include "store_stats.h"

namespace rl {

struct StatsView {
  const StoreStats* stats = nullptr;
  BreakerState breaker = BreakerState::closed;
  int64_t breaker_opened = 0;
  bool has_round_trips = false;  // memory:// has none
};

// Metric names start with "rl_"; every line ends in '\n'.
std::string metrics_text(const StatsView& view);

}  // namespace rl
