#include "cluster_topology.h"

#include "error.h"
#include "quote.h"
#include "resp.h"

namespace rl::redis {

ClusterTopology::ClusterTopology(boost::asio::io_context& io, NodeOptions base,
                                 std::vector<ClusterNode> seeds)
    : io_(io), base_(std::move(base)), seeds_(std::move(seeds)) {
  {
    std::lock_guard lock(mutex_);
    for (const ClusterNode& seed : seeds_) connection_to(seed);
  }
  refresh();
}

Connection& ClusterTopology::connection_to(const ClusterNode& node) {
  auto& slot = connections_[{node.host, node.port}];
  if (!slot) {
    NodeOptions options = base_;
    options.host = node.host;
    options.port = node.port;
    slot = Connection::create(io_, std::move(options));
    node_of_[slot.get()] = node;
  }
  return *slot;
}

Connection& ClusterTopology::node_for(std::string_view key, uint32_t& slot) {
  slot = key_slot(key);
  std::lock_guard lock(mutex_);
  const int owner = map_.owner_of(static_cast<uint16_t>(slot));
  if (owner >= 0) return *by_master_[static_cast<size_t>(owner)];
  return connection_to(seeds_.front());  // no map yet, or an uncovered slot
}

void ClusterTopology::for_each_node(const std::function<void(Connection&)>& visit) {
  // Visited without the lock: a visit may complete calls whose handlers
  // route again.
  std::vector<Connection*> all;
  {
    std::lock_guard lock(mutex_);
    for (auto& [address, connection] : connections_) all.push_back(connection.get());
  }
  for (Connection* c : all) visit(*c);
}

Connection* ClusterTopology::redirect(const Redirect& r, const Connection& from) {
  Connection* to = nullptr;
  {
    std::lock_guard lock(mutex_);
    ClusterNode node = r.node;
    if (node.host.empty()) {  // "MOVED 3999 :6381": the host of the node that answered
      auto it = node_of_.find(&from);
      if (it == node_of_.end()) return nullptr;
      node.host = it->second.host;
    }
    to = &connection_to(node);
    if (r.kind == Redirect::Kind::moved) {
      const auto index = static_cast<size_t>(map_.assign(r.slot, node));
      if (by_master_.size() <= index) by_master_.resize(index + 1);
      by_master_[index] = to;
    }
  }
  if (r.kind == Redirect::Kind::moved) refresh();  // other slots likely moved too
  return to;
}

void ClusterTopology::refresh(const Connection* failed) {
  if (refreshing_.exchange(true)) return;
  Connection* source = nullptr;
  {
    std::lock_guard lock(mutex_);
    // Round robin over every known node but the one that just failed: a
    // node that is down fails the read, and the next read asks another.
    for (size_t tries = 0; tries < connections_.size(); ++tries) {
      auto it = connections_.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(next_source_++ % connections_.size()));
      source = it->second.get();
      if (source != failed) break;
    }
  }
  Request request;
  request.commands = format_command({"CLUSTER", "SLOTS"});
  request.deadline = std::chrono::steady_clock::now() + base_.connect_timeout;
  request.done = [this, source](Failure&& f, std::vector<Reply>&& replies) {
    if (!f && replies.at(0).is_error()) {
      f = Failure{Code::backend_error,
                  source->name() + ": CLUSTER SLOTS: " + quote(replies[0].text, 200)};
    }
    if (!f) {
      try {
        install(SlotMap::from_cluster_slots(replies[0]));
      } catch (const Error& e) {
        f = Failure{e.code(), source->name() + ": " + e.what()};
      }
    }
    if (f) {
      std::lock_guard lock(mutex_);
      map_failure_ = std::move(f);
      ready_.notify_all();
    }
    refreshing_.store(false);
  };
  try {
    source->send(std::move(request));
  } catch (const Error&) {  // the store is closing
    refreshing_.store(false);
  }
}

void ClusterTopology::install(SlotMap map) {
  std::lock_guard lock(mutex_);
  std::vector<Connection*> by_master;
  for (const ClusterNode& master : map.masters()) by_master.push_back(&connection_to(master));
  map_ = std::move(map);
  by_master_ = std::move(by_master);
  have_map_ = true;
  map_failure_ = Failure{};
  ready_.notify_all();
}

std::vector<std::pair<const Connection*, ClusterNode>> ClusterTopology::masters() {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<const Connection*, ClusterNode>> out;
  if (by_master_.empty()) {
    const Connection* seed = &connection_to(seeds_.front());
    out.emplace_back(seed, node_of_.at(seed));
    return out;
  }
  // Each once (the map lists distinct masters, and a MOVED adds one that
  // is new to it).
  for (const Connection* c : by_master_) out.emplace_back(c, node_of_.at(c));
  return out;
}

Failure ClusterTopology::wait_ready(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [&] { return have_map_ || map_failure_; });
  if (have_map_) return {};
  return map_failure_;
}

}  // namespace rl::redis
