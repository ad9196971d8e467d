// A store's circuit breakers, one per node (docs/failure.md): a call asks
// the breaker of the node it goes to, so that on Cluster one dead master's
// slots fail fast while the other masters go on deciding. A store of one
// node (one server, Sentinel's master) has one breaker. A node's breaker is
// made the first time a call goes to it and kept for the store's life.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "circuit_breaker.h"
#include "metrics_text.h"
#include "store.h"

namespace rl {

class NodeBreakers {
 public:
  // One node's breaker, and the last outage it heard of (quoted by the
  // calls it refuses).
  class Node {
   public:
    Node(BreakerOptions options, const Clock& clock) : breaker(options, clock) {}
    CircuitBreaker breaker;
    void remember_outage(const std::string& message);
    std::string last_outage();

   private:
    std::mutex mutex_;
    std::string last_outage_;
  };

  NodeBreakers(BreakerOptions options, const Clock& clock);

  // Any thread: the breaker of `id` (Backend::node_of); nullptr's takes no lock.
  Node& of(NodeId id);

  // The breakers of the nodes that serve keys now, named as `serving` names
  // them, and the store's: the worst of those (open when any is open, else
  // half-open when any is) and how often any breaker ever opened.
  void fill(StatsView& view, const std::vector<NodeInfo>& serving);

 private:
  const BreakerOptions options_;
  const Clock& clock_;
  Node one_;  // nullptr: the store's one node
  std::mutex mutex_;
  std::unordered_map<NodeId, std::unique_ptr<Node>> others_;
};

}  // namespace rl
