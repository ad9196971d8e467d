// A TCP proxy on loopback between rl and a real redis-server, for fault
// tests: it forwards, delays, goes half-open (stops forwarding without
// closing, as a dead peer behind a NAT or proxy does), or resets.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

namespace rl::test {

class FaultProxy {
 public:
  // Which way a half-open connection stops forwarding.
  enum class Direction { both, replies };

  explicit FaultProxy(int target_port);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const;
  // Connections accepted so far (rl's reconnects show here).
  int accepted() const;
  // Every open connection stops forwarding in `direction` and stays open:
  // what arrives there is read and dropped, and it never forwards again.
  // Takes effect before this returns.
  void go_half_open(Direction direction = Direction::both);
  // While on, connections accepted are half-open (both ways) from the start.
  void set_new_connections_half_open(bool on);
  // Every chunk read is forwarded this much later, in order.
  void set_delay(std::chrono::milliseconds delay);
  // Every open connection is closed with a reset (RST) on both sides.
  void reset();
  // Forwards one byte at a time, this long apart (0: whole chunks again).
  void set_drip(std::chrono::milliseconds per_byte);
  // As a proxy process that dies and is started again: go_down() resets
  // every connection and refuses new ones; come_back() listens again on
  // the same port.
  void go_down();
  void come_back();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rl::test
