// min_replicas on real servers: a decision that wrote is answered only once
// WAIT says enough replicas have it; a master without them (none, or one
// that stopped acknowledging) gives an outage that on_failure handles, never
// a silent success; one WAIT ends a request whatever it holds (a batch, a
// coalesced FCALL); a peek waits for nothing; and a server's own NOREPLICAS
// (min-replicas-to-write) is an outage too. The failover figures are in
// sentinel_test.cpp and cluster_test.cpp (Failover*LosesNo*).
#include <atomic>
#include <chrono>
#include <iostream>
#include <sstream>
#include <thread>

#include "redis_env.h"

namespace rl::test {
namespace {

using Steady = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

Settings with_failure(const char* on_failure, const std::string& limit = "100/h") {
  Settings s = limiter_settings("gcra", limit);
  s.set("on_failure", on_failure);
  return s;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// INFO commandstats' calls of `command` ("wait") in redis-cli's output.
int64_t calls_of(const std::string& commandstats, const std::string& command) {
  std::istringstream in(commandstats);
  const std::string prefix = "cmdstat_" + command + ":calls=";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return std::stoll(line.substr(prefix.size()));
  }
  return 0;
}

// The Sentinel fixture's master and replica, addressed directly (a failover
// test may have swapped them), once the replica is in sync.
struct Replicated {
  std::string password = env_or_fail("RL_TEST_SENTINEL_DATA_PASSWORD");
  int master = 0;
  int replica = 0;

  Replicated() {
    const auto until = Steady::now() + std::chrono::seconds(20);
    while (Steady::now() < until) {
      for (int port : ports_of("RL_TEST_SENTINEL_NODE_PORTS")) {
        const std::string info = cli(port, "info replication");
        if (contains(info, "role:master") && contains(info, "connected_slaves:1") &&
            contains(info, "state=online")) {
          master = port;
        } else if (contains(info, "master_link_status:up")) {
          replica = port;
        }
      }
      if (master != 0 && replica != 0) return;
      master = replica = 0;
      std::this_thread::sleep_for(Ms(50));
    }
    ADD_FAILURE() << "the Sentinel fixture has no master with its replica in sync";
  }
  std::string cli(int port, const std::string& args) const {
    return shell("redis-cli -p " + std::to_string(port) + " -a " + password +
                 " --no-auth-warning " + args);
  }
  std::string url(const std::string& extra) const {
    return "redis://:" + password + "@127.0.0.1:" + std::to_string(master) +
           "?prefix=" + unique_prefix() + "&" + extra;
  }
  int64_t waits() const { return calls_of(cli(master, "info commandstats"), "wait"); }
  // The keys under `prefix` the replica holds.
  size_t replica_keys(const std::string& prefix) const {
    std::istringstream in(cli(replica, "--scan --pattern '" + prefix + ":*'"));
    size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
    return n;
  }
};

std::string prefix_of(const std::string& url) {
  const size_t at = url.find("prefix=") + 7;
  return url.substr(at, url.find('&', at) - at);
}

// The main test server has no replica: WAIT 1 gets 0 when its timeout ends.
TEST(MinReplicas, AMasterWithoutItsReplicasIsAnOutageThatOnFailureHandles) {
  const std::string prefix = unique_prefix();
  auto store = open_store(
      redis_url("min_replicas=1&min_replicas_timeout_ms=50&breaker_failures=0", prefix), {});
  Limiter closed(store, with_failure("closed"));
  // Connected, with its script loaded, before the timing: a peek waits for
  // no replica. (The first call's connection counted in the bound: 235 ms
  // of 200 on a loaded machine.)
  ASSERT_EQ(closed.run(Op::peek, "k", 1).code, Code::ok);
  const auto t0 = Steady::now();
  const Outcome o = closed.run(Op::acquire, "k", 1);
  const auto took = Steady::now() - t0;
  EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
  EXPECT_TRUE(contains(o.message, "min_replicas=1: 0 replicas acknowledged the write within 50 ms"))
      << o.message;
  EXPECT_TRUE(contains(o.message, "redis 127.0.0.1:")) << o.message;  // the node that took it
  EXPECT_GE(took, Ms(50));
  EXPECT_LT(took, Ms(50) + kSlack);

  Limiter open(store, with_failure("open"));
  const Outcome allowed = open.run(Op::acquire, "k", 1);
  ASSERT_EQ(allowed.code, Code::ok) << allowed.message;
  EXPECT_TRUE(allowed.verdict.allowed);
  EXPECT_EQ(allowed.verdict.source, Source::fail_open);

  Limiter local(store, with_failure("local"));
  const Outcome local_decision = local.run(Op::acquire, "k", 1);
  ASSERT_EQ(local_decision.code, Code::ok) << local_decision.message;
  EXPECT_EQ(local_decision.verdict.source, Source::local);

  // A batch: one outage for the whole of it.
  EXPECT_THROW(closed.acquire_batch({Call{Op::acquire, "a", 1, 0}, Call{Op::acquire, "b", 1, 0}}),
               Error);

  // Each write ran on the master and counted there: only the replicas'
  // acknowledgement was missing.
  auto plain = open_store(redis_url("", prefix), {});
  Limiter look(plain, limiter_settings("gcra", "100/h"));
  const Outcome peek = look.run(Op::peek, "k", 0);
  ASSERT_EQ(peek.code, Code::ok) << peek.message;
  EXPECT_EQ(peek.verdict.remaining, 100 - 3);
}

TEST(MinReplicas, APeekWaitsForNoReplica) {
  auto store = open_redis("min_replicas=1&min_replicas_timeout_ms=50&breaker_failures=0");
  Limiter limiter(store, limiter_settings("gcra", "10/h"));
  const int64_t waits_before = calls_of(redis_cli("info commandstats"), "wait");
  for (int i = 0; i < 5; ++i) {
    const Outcome o = limiter.run(Op::peek, "k", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    EXPECT_TRUE(o.verdict.allowed);
  }
  EXPECT_EQ(calls_of(redis_cli("info commandstats"), "wait"), waits_before);
}

// The replica stops answering (CLIENT PAUSE on it, shorter than the
// sentinels' down-after): the master's WAIT runs out, each write is an
// outage until the replica acknowledges again.
TEST(MinReplicas, AReplicaThatStopsAcknowledgingIsAnOutage) {
  const Replicated nodes;
  auto store =
      open_store(nodes.url("min_replicas=1&min_replicas_timeout_ms=50&breaker_failures=0"), {});
  Limiter closed(store, with_failure("closed"));
  Limiter open(store, with_failure("open"));
  ASSERT_EQ(closed.run(Op::acquire, "k", 1).code, Code::ok);
  nodes.cli(nodes.replica, "client pause 400 all");
  const Outcome o = closed.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
  EXPECT_TRUE(contains(o.message, "0 replicas acknowledged the write within 50 ms")) << o.message;
  const Outcome fail_open = open.run(Op::acquire, "k", 1);
  ASSERT_EQ(fail_open.code, Code::ok) << fail_open.message;
  EXPECT_EQ(fail_open.verdict.source, Source::fail_open);
  nodes.cli(nodes.replica, "client unpause");
  const auto until = Steady::now() + std::chrono::seconds(5);
  Outcome back;
  do {
    back = closed.run(Op::acquire, "k", 1);
  } while (back.code != Code::ok && Steady::now() < until);
  EXPECT_EQ(back.code, Code::ok) << back.message;
  EXPECT_EQ(back.verdict.source, Source::store);
}

// WAIT acknowledges every write its connection made before it: a request
// ends with one, however many calls it holds.
TEST(MinReplicas, OneWaitFollowsEachRequestAndCoversAllOfItsCalls) {
  const Replicated nodes;
  const std::string url = nodes.url("min_replicas=1&breaker_failures=0");
  const std::string prefix = prefix_of(url);
  auto store = open_store(url, {});
  Limiter limiter(store, limiter_settings("gcra", "1/h"));
  ASSERT_EQ(limiter.run(Op::acquire, "first", 1).code, Code::ok);  // the library is there

  int64_t before = nodes.waits();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(limiter.run(Op::acquire, "one", 1).code, Code::ok);
  EXPECT_EQ(nodes.waits() - before, 10) << "one WAIT per single call";

  std::vector<Call> batch;
  for (int i = 0; i < 50; ++i) batch.push_back(Call{Op::acquire, "b" + std::to_string(i), 1, 0});
  before = nodes.waits();
  const std::vector<Outcome> outcomes = limiter.acquire_batch(batch);
  for (const Outcome& o : outcomes) {
    ASSERT_EQ(o.code, Code::ok) << o.message;
    EXPECT_TRUE(o.verdict.allowed);
  }
  EXPECT_EQ(nodes.waits() - before, 1) << "one WAIT after the batch's 50 calls";
  // When the batch returns the replica has every write of it: 50 keys, plus
  // "first" and "one".
  EXPECT_EQ(nodes.replica_keys(prefix), 52u);

  // 8 threads on one key: calls that wait behind one in flight leave as one
  // FCALL, followed by one WAIT.
  before = nodes.waits();
  Limiter shared(store, limiter_settings("fixed_window", "1000000/h", "shared"));
  constexpr int kThreads = 8;
  constexpr int kCalls = 100;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i)
        failures += shared.run(Op::acquire, "hot", 1).code != Code::ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const int64_t waits = nodes.waits() - before;
  EXPECT_GE(waits, 1);
  EXPECT_LT(waits, kThreads * kCalls) << "coalesced calls share their WAIT";
  std::cout << "[ figure ] " << kThreads * kCalls << " decisions of " << kThreads
            << " threads on one key: " << waits << " WAITs\n";
  const Outcome peek = shared.run(Op::peek, "hot", 0);
  EXPECT_EQ(peek.verdict.remaining, 1000000 - kThreads * kCalls);
}

// A user whose ACL lacks +wait (docs/redis.md's least-privilege rule
// without it): the WAIT's NOPERM is the deployment's error, not an outage.
TEST(MinReplicas, AUserNotAllowedWaitGetsAnAuthError) {
  redis_cli(
      "acl setuser rl-no-wait on '>no-wait-pw' resetkeys '~rl:*' '~t*' resetchannels -@all "
      "+evalsha +eval +fcall '+function|load' '+function|list' +auth +select +ping +role +time "
      "+get +set +incrby +decrby +del +pexpire +pexpireat +llen +lindex +lrange +lset +ltrim "
      "+rpush +rpop");
  auto store =
      open_store("redis://rl-no-wait:no-wait-pw@127.0.0.1:" + env_or_fail("RL_TEST_REDIS_PORT") +
                     "?min_replicas=1&min_replicas_timeout_ms=50&breaker_failures=0",
                 {});
  Limiter open(store, with_failure("open"));
  const Outcome o = open.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::auth) << o.message;
  EXPECT_TRUE(contains(o.message, "min_replicas=1: WAIT failed after the write: 'NOPERM"))
      << o.message;
}

// CONFIG SET min-replicas-to-write on a master without replicas: it refuses
// writes with NOREPLICAS, an outage like MASTERDOWN or READONLY.
TEST(MinReplicas, ANoReplicasReplyIsAnOutage) {
  struct MinReplicasToWrite {
    MinReplicasToWrite() { redis_cli("config set min-replicas-to-write 1"); }
    ~MinReplicasToWrite() { redis_cli("config set min-replicas-to-write 0"); }
  } refusing;
  for (const char* mode : {"functions", "scripts"}) {
    auto store = open_redis(std::string("breaker_failures=0&script_mode=") + mode);
    Limiter closed(store, with_failure("closed"));
    const Outcome o = closed.run(Op::acquire, "k", 1);
    EXPECT_EQ(o.code, Code::backend_unavailable) << mode << ": " << o.message;
    EXPECT_TRUE(contains(o.message, "NOREPLICAS")) << o.message;
    Limiter open(store, with_failure("open"));
    const Outcome fail_open = open.run(Op::acquire, "k", 1);
    ASSERT_EQ(fail_open.code, Code::ok) << mode << ": " << fail_open.message;
    EXPECT_EQ(fail_open.verdict.source, Source::fail_open);
    // Coalesced calls: the batch FCALL is refused as a whole, each call an outage.
    std::vector<std::thread> threads;
    std::atomic<int> outages{0};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 20; ++i) {
          outages += closed.run(Op::acquire, "hot", 1).code == Code::backend_unavailable;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(outages.load(), 80) << mode;
  }
}

}  // namespace
}  // namespace rl::test
