// Which node serves a key. A standalone server, and Sentinel's current
// master (the connection's resolver follows it, resolver.h), are one node;
// Cluster (cluster_topology.h) routes each key by its slot, one connection
// per master.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster_slots.h"
#include "connection.h"

namespace rl::redis {

class Topology {
 public:
  virtual ~Topology() = default;
  // Any thread: the node for `key` (a whole Redis key) and its Cluster slot
  // (0 on one node).
  virtual Connection& node_for(std::string_view key, uint32_t& slot) = 0;
  // Every connection made so far (none is ever dropped before the store).
  virtual void for_each_node(const std::function<void(Connection&)>& visit) = 0;

  // Cluster only; one node needs none of these.
  virtual bool is_cluster() const { return false; }
  // A MOVED or ASK reply from `from`: the connection to send to (MOVED also
  // updates the slot map). nullptr: not followed.
  virtual Connection* redirect(const Redirect&, const Connection& /*from*/) { return nullptr; }
  // Reads the slot map again (a node failed, the cluster said CLUSTERDOWN),
  // asking another node than `failed` when there is one. At most one read
  // at a time; returns at once.
  virtual void refresh(const Connection* /*failed*/ = nullptr) {}
  // Waits until the first slot map is read (at most `timeout`): why not.
  virtual Failure wait_ready(std::chrono::milliseconds) { return {}; }
  // Any thread: each master of the slot map and its connection (before the
  // first map, the first seed, where node_for sends every key).
  virtual std::vector<std::pair<const Connection*, ClusterNode>> masters() { return {}; }
};

class StandaloneTopology final : public Topology {
 public:
  explicit StandaloneTopology(std::unique_ptr<Connection> node) : node_(std::move(node)) {}
  Connection& node_for(std::string_view, uint32_t& slot) override {
    slot = 0;
    return *node_;
  }
  void for_each_node(const std::function<void(Connection&)>& visit) override { visit(*node_); }

 private:
  std::unique_ptr<Connection> node_;
};

}  // namespace rl::redis
