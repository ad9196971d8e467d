// Redis Cluster's routing, with no I/O: the slot of a key, the slot map
// from a CLUSTER SLOTS reply, and what a MOVED or ASK reply says. The
// routing half of redis+cluster:// (cluster_topology.h holds the
// connections).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reply.h"

namespace rl::redis {

inline constexpr int kClusterSlots = 16384;

// CRC16 (XMODEM) of the key's hash tag (the text between the first '{' and
// the next '}', when not empty) or of the whole key, mod 16384.
uint16_t key_slot(std::string_view key);

struct ClusterNode {
  std::string host;
  int port = 0;
  bool operator==(const ClusterNode&) const = default;
};

class SlotMap {
 public:
  // From CLUSTER SLOTS: [[first, last, [host, port, ...], replicas...], ...].
  // Throws backend_error naming what is malformed. Slots no range covers
  // have no master (the cluster is not fully covered).
  static SlotMap from_cluster_slots(const Reply& reply);

  // nullptr for an uncovered slot.
  const ClusterNode* master_for(uint16_t slot) const;
  // The index in masters() of the slot's master, or -1.
  int owner_of(uint16_t slot) const { return owner_[slot]; }
  // A MOVED reply: `node` serves `slot` now. Returns its index in masters().
  int assign(uint16_t slot, const ClusterNode& node);
  // Each master once, in the order of its first slot.
  const std::vector<ClusterNode>& masters() const { return masters_; }

 private:
  std::vector<ClusterNode> masters_;
  std::vector<int16_t> owner_ = std::vector<int16_t>(kClusterSlots, -1);  // index in masters_
};

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381". An empty host
// (":6381") means the host of the node that answered.
struct Redirect {
  enum class Kind { moved, ask };
  Kind kind = Kind::moved;
  uint16_t slot = 0;
  ClusterNode node;
};
std::optional<Redirect> parse_redirect(std::string_view error_text);

// A call of a node batch (its first key declared only, coalescer.h), refused by the
// node before it touched anything: its key is not served there ("non
// local key": the slot moved, or is moving and the key is not there;
// kNotRunInBatch: the batch was redirected for another call's key), or
// the cluster is down. Redis 7 and Valkey word both so.
bool refused_in_batch(std::string_view error_text);
inline constexpr std::string_view kNotRunInBatch =
    "ERR rl: not run: its node batch was redirected for another call's key";
bool down_in_batch(std::string_view error_text);

}  // namespace rl::redis
