#include "node_breakers.h"

#include <algorithm>

namespace rl {
namespace {

// How bad a state is for the store's own: open, then half-open, then closed.
int severity(BreakerState s) {
  switch (s) {
    case BreakerState::closed: return 0;
    case BreakerState::half_open: return 1;
    case BreakerState::open: return 2;
  }
  return 0;
}

}  // namespace

void NodeBreakers::Node::remember_outage(const std::string& message) {
  std::lock_guard lock(mutex_);
  last_outage_ = message;
}

std::string NodeBreakers::Node::last_outage() {
  std::lock_guard lock(mutex_);
  return last_outage_;
}

NodeBreakers::NodeBreakers(BreakerOptions options, const Clock& clock)
    : options_(options), clock_(clock), one_(options, clock) {}

NodeBreakers::Node& NodeBreakers::of(NodeId id) {
  if (id == nullptr) return one_;
  std::lock_guard lock(mutex_);
  std::unique_ptr<Node>& node = others_[id];
  if (!node) node = std::make_unique<Node>(options_, clock_);
  return *node;
}

void NodeBreakers::fill(StatsView& view, const std::vector<NodeInfo>& serving) {
  view.breaker = BreakerState::closed;
  view.breaker_opened = one_.breaker.times_opened();
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, node] : others_) view.breaker_opened += node->breaker.times_opened();
  }
  view.nodes.clear();
  for (const NodeInfo& info : serving) {
    const CircuitBreaker& b = of(info.id).breaker;
    view.nodes.push_back({info.address, b.state(), b.times_opened()});
    if (severity(b.state()) > severity(view.breaker)) view.breaker = b.state();
  }
}

}  // namespace rl
