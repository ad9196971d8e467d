// redis+cluster://: one connection per master, made when the slot map first
// names it, and the map itself (cluster_slots.h), read with CLUSTER SLOTS
// from any node the store knows: at open, after a MOVED, and when a node
// fails (a failover moves its slots to a replica). Until the first map
// arrives every key goes to the first seed, which answers MOVED.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology.h"

namespace boost::asio {
class io_context;
}

namespace rl::redis {

class ClusterTopology final : public Topology {
 public:
  // `base`: what every node's connection shares (credentials, timeouts);
  // its host and port are replaced by each node's.
  ClusterTopology(boost::asio::io_context& io, NodeOptions base, std::vector<ClusterNode> seeds);

  Connection& node_for(std::string_view key, uint32_t& slot) override;
  void for_each_node(const std::function<void(Connection&)>& visit) override;
  bool is_cluster() const override { return true; }
  Connection* redirect(const Redirect& r, const Connection& from) override;
  void refresh(const Connection* failed = nullptr) override;
  Failure wait_ready(std::chrono::milliseconds timeout) override;
  std::vector<std::pair<const Connection*, ClusterNode>> masters() override;

 private:
  // With mutex_ held.
  Connection& connection_to(const ClusterNode& node);
  void install(SlotMap map);

  boost::asio::io_context& io_;
  const NodeOptions base_;
  const std::vector<ClusterNode> seeds_;

  std::mutex mutex_;
  std::condition_variable ready_;
  SlotMap map_;
  bool have_map_ = false;
  Failure map_failure_;                 // why the last read failed
  std::vector<Connection*> by_master_;  // by index in map_.masters()
  std::map<std::pair<std::string, int>, std::unique_ptr<Connection>> connections_;
  std::unordered_map<const Connection*, ClusterNode> node_of_;
  size_t next_source_ = 0;  // who answers the next CLUSTER SLOTS

  std::atomic<bool> refreshing_{false};
};

}  // namespace rl::redis
