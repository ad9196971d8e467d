// A stand-in for a Redis Sentinel on loopback, for tests that decide when
// the master moves: it answers SENTINEL GET-MASTER-ADDR-BY-NAME with the
// address it is given, confirms SUBSCRIBE, and announces +switch-master to
// its subscribers when told.
#pragma once

#include <memory>
#include <string>

namespace rl::test {

class FakeSentinel {
 public:
  explicit FakeSentinel(int master_port);
  ~FakeSentinel();
  FakeSentinel(const FakeSentinel&) = delete;
  FakeSentinel& operator=(const FakeSentinel&) = delete;

  int port() const;
  // Later questions get this master; subscribers hear nothing.
  void set_master(int port);
  // Sets the master and tells every subscriber (+switch-master for `name`).
  void switch_master(const std::string& name, int port);
  // Questions answered so far.
  int asked() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rl::test
