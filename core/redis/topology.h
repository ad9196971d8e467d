// Which node serves a key. A standalone server, and Sentinel's current
// master (the connection's resolver follows it, resolver.h), are one node;
// Cluster (slot routing with cluster_slots.h, one connection per master)
// fits behind the same interface.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "connection.h"

namespace rl::redis {

class Topology {
 public:
  virtual ~Topology() = default;
  // The node for a key whose hash tag is `hash_tag` (the escaped user key).
  virtual Connection& node_for(std::string_view hash_tag) = 0;
  virtual void for_each_node(const std::function<void(Connection&)>& visit) = 0;
};

class StandaloneTopology final : public Topology {
 public:
  explicit StandaloneTopology(std::unique_ptr<Connection> node) : node_(std::move(node)) {}
  Connection& node_for(std::string_view) override { return *node_; }
  void for_each_node(const std::function<void(Connection&)>& visit) override { visit(*node_); }

 private:
  std::unique_ptr<Connection> node_;
};

}  // namespace rl::redis
