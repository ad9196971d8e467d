// How a redis+sentinel:// store finds a moved master, one cause at a time,
// with a stand-in sentinel (fake_sentinel.h) that names the master the test
// chooses, and two private redis-servers: an announcement (+switch-master),
// a READONLY reply from a demoted master, and a lost connection each make
// the store ask again and move, without a restart.
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <chrono>
#include <iostream>
#include <thread>

#include "fake_sentinel.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

int free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

// A redis-server of the test's own, under RL_TEST_REDIS_DIR so that
// scripts/with-redis stops it even if the test does not.
class PrivateRedis {
 public:
  PrivateRedis() : port_(free_port()) {
    dir_ = env_or_fail("RL_TEST_REDIS_DIR") + "/private-" + std::to_string(port_);
    shell("mkdir -p " + dir_ + " && redis-server --port " + std::to_string(port_) +
          " --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile " + dir_ +
          "/redis.pid --logfile " + dir_ + "/redis.log --dir " + dir_);
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (cli("ping").find("PONG") == std::string::npos && Clock::now() < until) {
      std::this_thread::sleep_for(Ms(20));
    }
  }
  ~PrivateRedis() { shell("kill $(cat " + dir_ + "/redis.pid)"); }
  int port() const { return port_; }
  std::string cli(const std::string& args) const {
    return shell("redis-cli -p " + std::to_string(port_) + " " + args);
  }
  bool holds(const std::string& prefix) const {
    return !cli("--scan --pattern '" + prefix + ":*'").empty();
  }

 private:
  int port_;
  std::string dir_;
};

struct TwoMasters {
  PrivateRedis a;
  PrivateRedis b;
  FakeSentinel sentinel{a.port()};
  std::string prefix = unique_prefix();
  std::shared_ptr<Store> store =
      open_store("redis+sentinel://127.0.0.1:" + std::to_string(sentinel.port()) +
                     "/mymaster?reconnect_max_ms=50&prefix=" + prefix,
                 {});
  // Slow enough that a key outlives the test (3.6 s per decision):
  // holds() looks for it.
  Limiter limiter{store, limiter_settings("gcra", "1000/h")};

  // Decides until a decision lands on b: within 1 s (the reconnect backoff
  // is at most 50 ms; redis-cli polls b). Every failure meanwhile is an
  // outage: the one the cause itself fails, and calls made during the
  // backoff, which fail at once (how many depends on the machine's speed).
  void decide_until_on_b(const char* what) {
    const auto start = Clock::now();
    int failures = 0;
    while (!b.holds(prefix)) {
      ASSERT_LT(Clock::now() - start, std::chrono::seconds(1)) << what << ": never moved";
      const Outcome o = limiter.run(Op::acquire, "k", 1);
      if (o.code != Code::ok) {
        ++failures;
        EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
      }
    }
    std::cout << what << ": on the new master after "
              << std::chrono::duration_cast<Ms>(Clock::now() - start).count() << " ms, " << failures
              << " decisions failed\n";
  }
};

TEST(SentinelSwitch, AnAnnouncementMovesTheStore) {
  TwoMasters s;
  ASSERT_EQ(s.limiter.run(Op::acquire, "k", 1).code, Code::ok);
  ASSERT_TRUE(s.a.holds(s.prefix));
  // a is still a master: only the announcement can move the store.
  s.sentinel.switch_master("mymaster", s.b.port());
  s.decide_until_on_b("+switch-master");
}

TEST(SentinelSwitch, AnAnnouncementForAnotherMasterIsIgnored) {
  TwoMasters s;
  ASSERT_EQ(s.limiter.run(Op::acquire, "k", 1).code, Code::ok);
  const int asked = s.sentinel.asked();
  s.sentinel.switch_master("other-master", s.a.port());
  for (int i = 0; i < 20; ++i) ASSERT_EQ(s.limiter.run(Op::acquire, "k", 1).code, Code::ok);
  EXPECT_EQ(s.sentinel.asked(), asked);
}

TEST(SentinelSwitch, AReadonlyReplyMakesTheStoreAskAgain) {
  TwoMasters s;
  ASSERT_EQ(s.limiter.run(Op::acquire, "k", 1).code, Code::ok);
  // Demoted without an announcement: a answers READONLY from now on.
  s.sentinel.set_master(s.b.port());
  ASSERT_NE(s.a.cli("replicaof 127.0.0.1 " + std::to_string(s.b.port())).find("OK"),
            std::string::npos);
  s.decide_until_on_b("READONLY");
}

TEST(SentinelSwitch, ALostConnectionMakesTheStoreAskAgain) {
  TwoMasters s;
  ASSERT_EQ(s.limiter.run(Op::acquire, "k", 1).code, Code::ok);
  s.sentinel.set_master(s.b.port());
  s.a.cli("client kill type normal");
  s.decide_until_on_b("connection lost");
}

}  // namespace
}  // namespace rl::test
