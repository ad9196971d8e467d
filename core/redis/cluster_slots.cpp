#include "cluster_slots.h"

#include <charconv>

#include "error.h"

namespace rl::redis {
namespace {

uint16_t crc16(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char c : data) {
    crc ^= static_cast<uint16_t>(c) << 8;
    for (int i = 0; i < 8; ++i) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

bool parse_int(std::string_view text, int64_t min, int64_t max, int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= min && out <= max;
}

[[noreturn]] void malformed(const std::string& what) {
  throw Error(Code::backend_error, "CLUSTER SLOTS: " + what);
}

}  // namespace

uint16_t key_slot(std::string_view key) {
  if (const size_t open = key.find('{'); open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return crc16(key) % kClusterSlots;
}

SlotMap SlotMap::from_cluster_slots(const Reply& reply) {
  if (reply.type != Reply::Type::array) malformed("the reply is not an array");
  SlotMap map;
  for (const Reply& range : reply.elements) {
    if (range.type != Reply::Type::array || range.elements.size() < 3 ||
        range.elements[0].type != Reply::Type::integer ||
        range.elements[1].type != Reply::Type::integer) {
      malformed("a range is not [first, last, master, ...]");
    }
    const int64_t first = range.elements[0].integer;
    const int64_t last = range.elements[1].integer;
    if (first < 0 || last >= kClusterSlots || first > last) malformed("a range is out of 0-16383");
    const Reply& master = range.elements[2];
    if (master.type != Reply::Type::array || master.elements.size() < 2 ||
        master.elements[0].type != Reply::Type::string ||
        master.elements[1].type != Reply::Type::integer || master.elements[1].integer < 1 ||
        master.elements[1].integer > 65535) {
      malformed("a master is not [host, port, ...]");
    }
    const ClusterNode node{master.elements[0].text, static_cast<int>(master.elements[1].integer)};
    int16_t index = -1;
    for (size_t i = 0; i < map.masters_.size(); ++i) {
      if (map.masters_[i] == node) index = static_cast<int16_t>(i);
    }
    if (index < 0) {
      if (map.masters_.size() >= kClusterSlots) malformed("more masters than slots");
      index = static_cast<int16_t>(map.masters_.size());
      map.masters_.push_back(node);
    }
    for (int64_t s = first; s <= last; ++s) map.owner_[static_cast<size_t>(s)] = index;
  }
  return map;
}

const ClusterNode* SlotMap::master_for(uint16_t slot) const {
  if (slot >= kClusterSlots) return nullptr;
  const int16_t index = owner_[slot];
  return index < 0 ? nullptr : &masters_[static_cast<size_t>(index)];
}

int SlotMap::assign(uint16_t slot, const ClusterNode& node) {
  int index = -1;
  for (size_t i = 0; i < masters_.size(); ++i) {
    if (masters_[i] == node) index = static_cast<int>(i);
  }
  if (index < 0) {
    if (masters_.size() >= kClusterSlots) return owner_[slot];
    index = static_cast<int>(masters_.size());
    masters_.push_back(node);
  }
  owner_[slot] = static_cast<int16_t>(index);
  return index;
}

std::optional<Redirect> parse_redirect(std::string_view text) {
  Redirect r;
  if (text.substr(0, 6) == "MOVED ") {
    r.kind = Redirect::Kind::moved;
    text.remove_prefix(6);
  } else if (text.substr(0, 4) == "ASK ") {
    r.kind = Redirect::Kind::ask;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const size_t space = text.find(' ');
  int64_t slot = 0;
  if (space == std::string_view::npos ||
      !parse_int(text.substr(0, space), 0, kClusterSlots - 1, slot))
    return std::nullopt;
  const std::string_view address = text.substr(space + 1);
  // The port follows the last ':' (an IPv6 address holds several).
  const size_t colon = address.rfind(':');
  int64_t port = 0;
  if (colon == std::string_view::npos || !parse_int(address.substr(colon + 1), 1, 65535, port))
    return std::nullopt;
  r.slot = static_cast<uint16_t>(slot);
  r.node = ClusterNode{std::string(address.substr(0, colon)), static_cast<int>(port)};
  return r;
}

bool refused_in_batch(std::string_view text) {
  return text == kNotRunInBatch ||
         text.find("Script attempted to access a non local key") != std::string_view::npos;
}

bool down_in_batch(std::string_view text) {
  return text.find("Script attempted to") != std::string_view::npos &&
         text.find("while the cluster is down") != std::string_view::npos;
}

}  // namespace rl::redis
