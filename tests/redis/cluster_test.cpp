// redis+cluster:// on the real cluster of scripts/with-redis (three masters,
// three replicas): keys spread over the masters and decide exactly; a batch
// splits by node and joins in order; a store whose slot map is stale
// follows MOVED (a slot moved) and ASK (a slot half-way through a move);
// a manual failover is followed with nothing counted twice; a master that
// stops answering is replaced by its replica and calls recover (the time is
// printed), while a batch gets a result per request; each master has its
// own circuit breaker: a stopped master's slots fail fast while the other
// masters decide (figures printed), and a failover moves its slots to the
// new master's breaker. Tests that move slots, stop a master or fail over
// put the cluster back as they found it, in shape.
#include <signal.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "admission_ledger.h"
#include "redis/cluster_slots.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Steady = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

std::string cluster_url(const std::string& extra = "") {
  return env_or_fail("RL_TEST_CLUSTER_URL") + "?prefix=" + unique_prefix() +
         (extra.empty() ? "" : "&" + extra);
}

std::string cli(int port, const std::string& args) {
  return shell("redis-cli -p " + std::to_string(port) + " -a " +
               env_or_fail("RL_TEST_CLUSTER_PASSWORD") + " --no-auth-warning " + args);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<int> all_ports() {
  return ports_of("RL_TEST_CLUSTER_PORTS");
}

// The nodes talk TLS among themselves (tls-cluster): MIGRATE goes to the
// target's TLS port.
int tls_port_of(int port) {
  const std::vector<int> plain = all_ports();
  const std::vector<int> tls = ports_of("RL_TEST_CLUSTER_TLS_PORTS");
  for (size_t i = 0; i < plain.size() && i < tls.size(); ++i) {
    if (plain[i] == port) return tls[i];
  }
  ADD_FAILURE() << "no TLS port for " << port;
  return 0;
}

// The number `text` starts with (-1 when none): CLUSTER NODES as redis-cli
// prints it, which may be cut or an error when a node is going away.
int number_in(const std::string& text) {
  int value = -1;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

struct Node {
  std::string id;
  int port = 0;
  bool master = false;
  bool failed = false;
  bool myself = false;    // the node that answered CLUSTER NODES
  std::string master_id;  // a replica's master
  std::vector<std::pair<int, int>> slots;
};

// CLUSTER NODES as the node at `port` sees it (none when it does not answer).
std::vector<Node> nodes_seen_by(int port) {
  std::istringstream in(cli(port, "cluster nodes"));
  std::vector<Node> nodes;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    Node n;
    std::string address, flags, ping, pong, epoch, link;
    if (!(f >> n.id >> address >> flags >> n.master_id >> ping >> pong >> epoch >> link)) continue;
    // Not a node's line (redis-cli's own message when the node went away).
    if (n.id.size() != 40 || address.find(':') == std::string::npos) continue;
    n.port = number_in(address.substr(address.find(':') + 1));
    n.master = flags.find("master") != std::string::npos;
    n.failed = flags.find("fail") != std::string::npos;
    n.myself = flags.find("myself") != std::string::npos;
    for (std::string range; f >> range;) {
      if (range.front() == '[') continue;  // a slot being moved
      const size_t dash = range.find('-');
      const int first = number_in(range.substr(0, dash));
      n.slots.emplace_back(first,
                           dash == std::string::npos ? first : number_in(range.substr(dash + 1)));
    }
    nodes.push_back(n);
  }
  return nodes;
}

// CLUSTER NODES as one live node sees it.
std::vector<Node> cluster_nodes() {
  for (int port : all_ports()) {
    std::vector<Node> nodes = nodes_seen_by(port);
    if (!nodes.empty()) return nodes;
  }
  ADD_FAILURE() << "no cluster node answers CLUSTER NODES";
  return {};
}

bool holds(const Node& node, int slot) {
  for (auto [first, last] : node.slots) {
    if (slot >= first && slot <= last) return true;
  }
  return false;
}

// Whether the node at `port` says it is the master that serves `slot`.
bool serves(int port, int slot) {
  for (const Node& n : nodes_seen_by(port)) {
    if (n.myself) return n.master && holds(n, slot);
  }
  return false;
}

Node owner_of(int slot) {
  for (const Node& n : cluster_nodes()) {
    for (auto [first, last] : n.slots) {
      if (n.master && slot >= first && slot <= last) return n;
    }
  }
  ADD_FAILURE() << "no master serves slot " << slot;
  return {};
}

Node other_master(const Node& than) {
  for (const Node& n : cluster_nodes()) {
    if (n.master && !n.failed && n.id != than.id) return n;
  }
  ADD_FAILURE() << "no second master";
  return {};
}

bool in_sync(int replica_port);

// The master's replica, once it is in sync (after a failover a node takes
// a moment to become its new master's replica).
Node replica_of(const Node& master) {
  const auto until = Steady::now() + std::chrono::seconds(15);
  while (Steady::now() < until) {
    for (const Node& n : cluster_nodes()) {
      if (!n.master && n.master_id == master.id && in_sync(n.port)) return n;
    }
    std::this_thread::sleep_for(Ms(50));
  }
  ADD_FAILURE() << "no replica of " << master.port << " in sync";
  return {};
}

int slot_of(const std::string& user_key) {
  return redis::key_slot(user_key);
}

// Moves `slot`'s keys from one master to another, as redis-cli --cluster
// reshard does; with finish = false it stops half-way (the slot MIGRATING
// on `from`, IMPORTING on `to`, its keys already on `to`): where ASK is sent.
// With new_owner_first = false the old owner hears it first: for a moment
// each node names the other (MOVED back and forth), as when a slot is moved
// by hand in that order.
void move_slot(int slot, const Node& from, const Node& to, bool finish = true,
               bool new_owner_first = true) {
  const std::string s = std::to_string(slot);
  cli(to.port, "cluster setslot " + s + " importing " + from.id);
  cli(from.port, "cluster setslot " + s + " migrating " + to.id);
  std::istringstream keys(cli(from.port, "cluster getkeysinslot " + s + " 1000"));
  for (std::string key; std::getline(keys, key);) {
    if (key.empty()) continue;
    const std::string out =
        cli(from.port, "migrate 127.0.0.1 " + std::to_string(tls_port_of(to.port)) + " '" + key +
                           "' 0 5000 AUTH " + env_or_fail("RL_TEST_CLUSTER_PASSWORD"));
    EXPECT_NE(out.find("OK"), std::string::npos) << "MIGRATE: " << out;
  }
  if (!finish) return;
  // The new owner first, then the old one, then the rest (as redis-cli
  // --cluster reshard does).
  const Node& first = new_owner_first ? to : from;
  const Node& second = new_owner_first ? from : to;
  cli(first.port, "cluster setslot " + s + " node " + to.id);
  cli(second.port, "cluster setslot " + s + " node " + to.id);
  for (const Node& n : cluster_nodes()) {
    if (n.master && n.id != to.id && n.id != from.id)
      cli(n.port, "cluster setslot " + s + " node " + to.id);
  }
}

// Waits until every live node agrees the cluster is ok and `port` is a
// master (after a failover).
bool wait_until(const std::function<bool()>& ready, Ms timeout) {
  const auto until = Steady::now() + timeout;
  while (!ready()) {
    if (Steady::now() > until) return false;
    std::this_thread::sleep_for(Ms(50));
  }
  return true;
}

bool is_master(int port) {
  return cli(port, "role").rfind("master", 0) == 0;
}

bool cluster_ok() {
  for (const Node& n : cluster_nodes()) {
    if (n.failed) continue;
    if (cli(n.port, "cluster info").find("cluster_state:ok") == std::string::npos) return false;
  }
  return true;
}

bool in_sync(int replica_port) {
  return cli(replica_port, "info replication").find("master_link_status:up") != std::string::npos;
}

// Whether every node answers with the same cluster_current_epoch.
bool epochs_agree() {
  std::set<std::string> epochs;
  for (int port : all_ports()) {
    std::istringstream in(cli(port, "cluster info"));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("cluster_current_epoch:", 0) == 0) epochs.insert(trimmed(line));
    }
  }
  return epochs.size() == 1;
}

// Which master port serves each slot range, as the node at `port` sees it
// (empty when it does not answer, or when it sees two masters on one slot:
// a master just demoted keeps its slots in other nodes' views until gossip
// tells them).
std::map<std::pair<int, int>, int> slot_map_seen_by(int port) {
  std::map<std::pair<int, int>, int> map;
  std::set<int> slots;
  for (const Node& n : nodes_seen_by(port)) {
    if (!n.master || n.failed) continue;
    for (auto range : n.slots) {
      for (int slot = range.first; slot <= range.second; ++slot) {
        if (!slots.insert(slot).second) return {};
      }
      map[range] = n.port;
    }
  }
  return map;
}

// Whether every node answers with one map of slots to masters. Tests that
// pick a slot's master and replica (owner_of, replica_of) from one node's
// view start from it: a view still naming the master a failover just
// demoted made a test stop the wrong node.
bool maps_agree() {
  const auto first = slot_map_seen_by(all_ports().front());
  if (first.empty()) return false;
  for (int port : all_ports()) {
    if (slot_map_seen_by(port) != first) return false;
  }
  return true;
}

// The cluster as the failover tests need to find it: serving every slot,
// one epoch and one map on every node.
bool cluster_settled() {
  return cluster_ok() && epochs_agree() && maps_agree();
}

// Whether the cluster settled on `port` as a master: every node that
// answers sees it as a master with slots, and they agree on the epoch and
// the map.
bool settled_as_master(int port) {
  if (!is_master(port) || !cluster_settled()) return false;
  for (int seen_by : all_ports()) {
    for (const Node& n : nodes_seen_by(seen_by)) {
      if (n.port == port && (!n.master || n.slots.empty())) return false;
    }
  }
  return true;
}

// Asks a replica to take over with CLUSTER FAILOVER, once it is in sync,
// until it says it is master (asked again if a try does not end in 3 s).
bool ask_to_take_over(int replica_port, Steady::time_point until) {
  while (Steady::now() < until) {
    if (is_master(replica_port)) return true;
    if (in_sync(replica_port)) {
      cli(replica_port, "cluster failover");
      wait_until([&] { return is_master(replica_port); }, Ms(3000));
    } else {
      std::this_thread::sleep_for(Ms(50));
    }
  }
  return false;
}

// Makes a replica its master's master, and waits until the cluster settled
// on it (twice, 300 ms apart). A takeover can be undone moments after it
// said it won (a config epoch collision right after another failover):
// then the old master keeps its slots and refuses writes until its manual
// failover times out (5 s, the client pause CLUSTER FAILOVER puts on it), so
// the replica is asked again, which ends that pause either way.
bool promote(int replica_port) {
  const auto until = Steady::now() + std::chrono::seconds(30);
  while (ask_to_take_over(replica_port, until)) {
    if (wait_until([&] { return settled_as_master(replica_port) || !is_master(replica_port); },
                   Ms(5000)) &&
        settled_as_master(replica_port)) {
      std::this_thread::sleep_for(Ms(300));
      if (settled_as_master(replica_port)) return true;
    }
    if (Steady::now() >= until) break;
  }
  return false;
}

std::shared_ptr<Store> open_cluster(const std::string& extra = "") {
  return open_store(cluster_url(extra), {});
}

int64_t remaining_after_acquire(Limiter& limiter, const std::string& key) {
  const Outcome o = limiter.run(Op::acquire, key, 1);
  EXPECT_EQ(o.code, Code::ok) << o.message;
  return o.verdict.allowed ? o.verdict.remaining : -1;
}

TEST(Cluster, KeysSpreadOverEveryMasterAndDecideExactly) {
  const std::string prefix = unique_prefix();
  auto store = open_store(env_or_fail("RL_TEST_CLUSTER_URL") + "?prefix=" + prefix, {});
  for (const char* algorithm : kAlgorithms) {
    Limiter limiter(store, limiter_settings(algorithm, "3/1h", algorithm));
    for (int k = 0; k < 30; ++k) {
      int admitted = 0;
      for (int i = 0; i < 5; ++i) {
        const Outcome o = limiter.run(Op::acquire, "user-" + std::to_string(k), 1);
        ASSERT_EQ(o.code, Code::ok) << o.message;
        admitted += o.verdict.allowed ? 1 : 0;
      }
      EXPECT_EQ(admitted, 3) << algorithm << " key " << k;
    }
  }
  for (const Node& n : cluster_nodes()) {
    if (!n.master || n.slots.empty()) continue;
    EXPECT_NE(trimmed(cli(n.port, "--scan --pattern '" + prefix + ":*' | head -1")), "")
        << "master " << n.port << " holds none of the keys";
  }
}

TEST(Cluster, ABatchSplitsByNodeAndJoinsInOrder) {
  auto store = open_cluster();
  Limiter limiter(store, limiter_settings("gcra", "1/1h"));
  std::vector<Call> calls;
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 40; ++k) calls.push_back(Call{Op::acquire, "b" + std::to_string(k), 1, 0});
  }
  const std::vector<Outcome> outcomes = limiter.acquire_batch(calls);
  ASSERT_EQ(outcomes.size(), 80u);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    ASSERT_EQ(outcomes[i].code, Code::ok) << outcomes[i].message;
    EXPECT_EQ(outcomes[i].verdict.allowed, i < 40) << "request " << i;
  }
}

TEST(Cluster, AStaleMapFollowsMovedWithNothingCountedTwice) {
  auto store = open_cluster();
  Limiter limiter(store, limiter_settings("gcra", "10/1h"));
  const std::string key = "moving";
  EXPECT_EQ(remaining_after_acquire(limiter, key), 9);
  const Node from = owner_of(slot_of(key));
  const Node to = other_master(from);
  move_slot(slot_of(key), from, to);
  // The store still sends the key to `from`, which answers MOVED.
  EXPECT_EQ(remaining_after_acquire(limiter, key), 8);
  EXPECT_EQ(remaining_after_acquire(limiter, key), 7);
  EXPECT_EQ(owner_of(slot_of(key)).id, to.id);
  move_slot(slot_of(key), to, from);  // back, for the other tests
  EXPECT_EQ(remaining_after_acquire(limiter, key), 6);
}

TEST(Cluster, ASlotHalfWayThroughAMoveFollowsAsk) {
  auto store = open_cluster();
  Limiter limiter(store, limiter_settings("sliding_log", "10/1h"));
  const std::string key = "asked";
  EXPECT_EQ(remaining_after_acquire(limiter, key), 9);
  const Node from = owner_of(slot_of(key));
  const Node to = other_master(from);
  move_slot(slot_of(key), from, to, /*finish=*/false);
  // `from` no longer has the key and answers ASK; `to` serves it once asked.
  EXPECT_EQ(remaining_after_acquire(limiter, key), 8);
  EXPECT_EQ(remaining_after_acquire(limiter, key), 7);
  const std::string slot = std::to_string(slot_of(key));
  EXPECT_EQ(trimmed(cli(from.port, "cluster countkeysinslot " + slot)), "0");
  EXPECT_NE(trimmed(cli(to.port, "cluster countkeysinslot " + slot)), "0");
  for (const Node& n : cluster_nodes()) {  // finish the move, then move it back
    if (n.master) cli(n.port, "cluster setslot " + std::to_string(slot_of(key)) + " node " + to.id);
  }
  move_slot(slot_of(key), to, from);
  EXPECT_EQ(remaining_after_acquire(limiter, key), 6);
}

// Redis's own count of the MOVED and ASK errors it sent (INFO errorstats),
// summed over the masters.
int64_t redirects_sent() {
  int64_t total = 0;
  for (const Node& n : cluster_nodes()) {
    std::istringstream in(cli(n.port, "info errorstats"));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("errorstat_MOVED:count=", 0) == 0 ||
          line.rfind("errorstat_ASK:count=", 0) == 0) {
        total += std::stoll(line.substr(line.find('=') + 1));
      }
    }
  }
  return total;
}

TEST(Cluster, ReshardingWhileCallsRunLosesNoCallAndCountsNoneTwice) {
  // Four keys of one slot, so that moving that slot moves them all.
  const int slot = slot_of("reshard");
  std::vector<std::string> keys{"reshard"};
  for (int i = 0; keys.size() < 4; ++i) {
    if (slot_of("r" + std::to_string(i)) == slot) keys.push_back("r" + std::to_string(i));
  }
  auto store = open_cluster("timeout_ms=5000");
  constexpr int kLimit = 300;
  constexpr int kAttemptsPerThread = 400;  // per key: 2 threads -> 800 attempts
  Limiter limiter(store, limiter_settings("sliding_log", std::to_string(kLimit) + "/1h"));
  const int64_t redirects_before = redirects_sent();
  std::atomic<bool> moving{true};
  std::atomic<int> errors{0};
  std::vector<std::atomic<int>> admitted(keys.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const size_t k = static_cast<size_t>(t) % keys.size();
      for (int i = 0; i < kAttemptsPerThread; ++i) {
        const Outcome o = limiter.run(Op::acquire, keys[k], 1);
        if (o.code != Code::ok) {
          ++errors;
          ADD_FAILURE() << o.message;
        }
        if (o.verdict.allowed) ++admitted[k];
      }
    });
  }
  // Back and forth while the threads run.
  const Node home = owner_of(slot);
  const Node away = other_master(home);
  int moves = 0;
  for (; moves < 6; ++moves) {
    // Half the moves tell the old owner first (MOVED back and forth).
    move_slot(slot, moves % 2 == 0 ? home : away, moves % 2 == 0 ? away : home, true, moves < 3);
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(owner_of(slot).id, home.id);
  EXPECT_EQ(errors.load(), 0);
  for (size_t k = 0; k < keys.size(); ++k) {
    EXPECT_EQ(admitted[k].load(), kLimit) << keys[k];
    const Outcome peek = limiter.run(Op::peek, keys[k], 1);
    EXPECT_EQ(peek.verdict.remaining, 0) << keys[k] << ": the state counts what was admitted";
  }
  std::cout << "[ figure ] resharding: " << moves << " moves of one slot under 8 threads x "
            << kAttemptsPerThread << " calls; Redis sent " << redirects_sent() - redirects_before
            << " MOVED/ASK, all followed; " << errors.load() << " calls failed\n";
}

// One thread per key, each acquiring its key `attempts` times at once with
// the others: how many each admitted. Every call must succeed.
std::vector<int> admitted_by_a_thread_per_key(Limiter& limiter,
                                              const std::vector<std::string>& keys, int attempts) {
  std::vector<std::atomic<int>> admitted(keys.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < keys.size(); ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < attempts; ++i) {
        const Outcome o = limiter.run(Op::acquire, keys[k], 1);
        if (o.code != Code::ok) ADD_FAILURE() << o.message;
        if (o.verdict.allowed) ++admitted[k];
      }
    });
  }
  for (auto& t : threads) t.join();
  return {admitted.begin(), admitted.end()};
}

// FCALLs a master ran so far (INFO commandstats).
int64_t fcalls_on(int port) {
  std::istringstream in(cli(port, "info commandstats"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cmdstat_fcall:calls=", 0) == 0) return std::stoll(line.substr(20));
  }
  return 0;
}

// Calls of many slots of one master from many callers leave together (one
// FCALL of the node's batch, which declares one key), and count exactly;
// one key's slot moved under a store whose map is stale: its calls, refused
// inside a batch ("non local key"), go again alone and follow MOVED.
TEST(Cluster, OneMastersCallsOfEverySlotLeaveTogetherAndCountExactly) {
  // The Lua path (the node batch), even where the nodes load rl's module.
  auto store = open_cluster("timeout_ms=5000&script_mode=functions");
  constexpr int kLimit = 20;
  constexpr int kThreads = 16;
  constexpr int kAttempts = 40;
  Limiter limiter(store, limiter_settings("gcra", std::to_string(kLimit) + "/1h"));
  // Keys of distinct slots, all on one master.
  const Node home = owner_of(slot_of("n0"));
  std::vector<std::string> keys;
  std::set<int> slots;
  for (int i = 0; keys.size() < kThreads; ++i) {
    const std::string key = "n" + std::to_string(i);
    const int slot = slot_of(key);
    if (slots.count(slot) == 0 && owner_of(slot).id == home.id) {
      slots.insert(slot);
      keys.push_back(key);
    }
  }
  ASSERT_EQ(limiter.run(Op::acquire, keys[0], 1).code,
            Code::ok);  // the map read, the library loaded
  const Node away = other_master(home);
  const int moved_slot = slot_of(keys[1]);
  move_slot(moved_slot, home, away);  // the store's map still says home
  const int64_t fcalls_before = fcalls_on(home.port);
  const std::vector<int> admitted = admitted_by_a_thread_per_key(limiter, keys, kAttempts);
  const int64_t fcalls = fcalls_on(home.port) - fcalls_before;
  move_slot(moved_slot, away, home);  // back, for the other tests
  for (size_t k = 0; k < keys.size(); ++k) {
    // keys[0] took one before the threads ran.
    EXPECT_EQ(admitted[k], k == 0 ? kLimit - 1 : kLimit) << keys[k];
  }
  const int decisions_home = (kThreads - 1) * kAttempts;  // keys[1] went away
  EXPECT_LT(fcalls, decisions_home) << "calls of one master's slots did not coalesce";
  std::cout << "[ figure ] " << kThreads << " callers on " << kThreads
            << " slots of one master: " << decisions_home << " decisions there in " << fcalls
            << " FCALLs (the moved key's refused calls among them)\n";
}

TEST(Cluster, AManualFailoverIsFollowedWithNothingCountedTwice) {
  ASSERT_TRUE(wait_until(cluster_settled, Ms(15000)));
  auto store = open_cluster();
  Limiter limiter(store, limiter_settings("token_bucket", "100/1h"));
  const std::string key = "failing-over";
  EXPECT_EQ(remaining_after_acquire(limiter, key), 99);
  const Node master = owner_of(slot_of(key));
  const Node replica = replica_of(master);
  ASSERT_TRUE(wait_until([&] { return in_sync(replica.port); }, Ms(15000)));
  const auto started = Steady::now();
  ASSERT_TRUE(ask_to_take_over(replica.port, started + std::chrono::seconds(30)));
  // The old master is a replica now and answers MOVED.
  EXPECT_EQ(remaining_after_acquire(limiter, key), 98);
  const auto took = std::chrono::duration_cast<Ms>(Steady::now() - started);
  std::cout << "[ figure ] manual failover: first decision on the new master " << took.count()
            << " ms after CLUSTER FAILOVER\n";
  ASSERT_TRUE(promote(replica.port));  // settled
  // And back, so that the other tests find the cluster as it was.
  ASSERT_TRUE(promote(master.port));
  EXPECT_EQ(remaining_after_acquire(limiter, key), 97);
}

// Many callers on a master that became a replica under a store whose map
// is stale: their calls leave together as one node batch, which the
// replica refuses whole (MOVED for its first key); each call follows it
// (again if its own slot is elsewhere) and counts once.
TEST(Cluster, CallsCoalescedOnAMasterThatFailedOverFollowItAndCountOnce) {
  ASSERT_TRUE(wait_until(cluster_settled, Ms(15000)));
  auto store = open_cluster("timeout_ms=5000&script_mode=functions");
  constexpr int kLimit = 10;
  constexpr int kThreads = 16;
  constexpr int kAttempts = 20;
  Limiter limiter(store, limiter_settings("gcra", std::to_string(kLimit) + "/1h"));
  const Node master = owner_of(slot_of("fo0"));
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < kThreads; ++i) {
    const std::string key = "fo" + std::to_string(i);
    if (holds(master, slot_of(key))) keys.push_back(key);
  }
  ASSERT_EQ(limiter.run(Op::peek, keys[0], 1).code, Code::ok);  // the map read
  const Node replica = replica_of(master);
  ASSERT_TRUE(wait_until([&] { return in_sync(replica.port); }, Ms(15000)));
  // Settled before the calls: a takeover undone at once leaves the old
  // master pausing writes for up to 5 s, past the store's liveness timeout.
  ASSERT_TRUE(promote(replica.port));
  const std::vector<int> admitted = admitted_by_a_thread_per_key(limiter, keys, kAttempts);
  for (size_t k = 0; k < keys.size(); ++k) EXPECT_EQ(admitted[k], kLimit) << keys[k];
  ASSERT_TRUE(promote(master.port));  // and back, for the other tests
}

TEST(Cluster, AStoppedMasterIsReplacedAndABatchGetsAResultPerRequest) {
  ASSERT_TRUE(wait_until(cluster_settled, Ms(15000)));
  // No circuit breaker: the figure is the failover's and rl's own. (The
  // stopped node's breaker would open and add its cooldown.)
  auto store = open_cluster("timeout_ms=300&breaker_failures=0");
  constexpr int kLimit = 200;
  Limiter limiter(store, limiter_settings("gcra", std::to_string(kLimit) + "/1h"));
  const std::string key = "stopping";
  int admitted = 0;  // on `key`, over the whole test
  for (int i = 0; i < kLimit / 2; ++i) admitted += remaining_after_acquire(limiter, key) >= 0;
  const Node master = owner_of(slot_of(key));
  const Node replica = replica_of(master);
  // Keys on other masters: they keep answering.
  std::vector<Call> batch{Call{Op::acquire, key, 1, 0}};
  for (int k = 0; batch.size() < 4; ++k) {
    const std::string other = "elsewhere-" + std::to_string(k);
    if (owner_of(slot_of(other)).id != master.id) batch.push_back(Call{Op::acquire, other, 1, 0});
  }
  const int pid = std::stoi(shell("cat " + env_or_fail("RL_TEST_REDIS_DIR") + "/cluster-" +
                                  std::to_string(master.port) + "/redis.pid"));
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  const auto stopped = Steady::now();
  const std::vector<Outcome> outcomes = limiter.acquire_batch(batch);
  ASSERT_EQ(outcomes.size(), batch.size());
  EXPECT_EQ(outcomes[0].code, Code::timeout) << outcomes[0].message;
  for (size_t i = 1; i < outcomes.size(); ++i) {
    EXPECT_EQ(outcomes[i].code, Code::ok) << "request " << i << ": " << outcomes[i].message;
  }
  // Calls on the stopped master's slot fail until its replica takes over
  // (a real failover in real time: polled every 20 ms).
  std::map<std::string, int> failures;
  std::optional<Steady::time_point> promoted;  // when the replica said it is master
  bool recovered = false;
  while (Steady::now() - stopped < std::chrono::seconds(20)) {
    const Outcome o = limiter.run(Op::acquire, key, 1);
    if (o.code == Code::ok) {
      recovered = true;
      break;
    }
    ++failures[code_name(static_cast<int>(o.code))];
    if (!promoted && is_master(replica.port)) promoted = Steady::now();
    std::this_thread::sleep_for(Ms(20));
  }
  const auto took = std::chrono::duration_cast<Ms>(Steady::now() - stopped);
  const bool replica_took_over = is_master(replica.port);
  // Nothing over the limit: the new master has every admission the old
  // one acknowledged (none was lost to asynchronous replication).
  admitted += recovered ? 1 : 0;
  while (recovered && remaining_after_acquire(limiter, key) >= 0) ++admitted;
  kill(pid, SIGCONT);  // it comes back as its replica's replica
  std::cout << "[ figure ] hard failover (cluster-node-timeout 1000 ms): first decision "
            << took.count() << " ms after the master stopped, "
            << (promoted ? std::chrono::duration_cast<Ms>(Steady::now() - *promoted).count() : 0)
            << " ms after its replica became master (timeout_ms=300); failed meanwhile:";
  for (const auto& [status, count] : failures) std::cout << " " << status << " x" << count;
  std::cout << "\n";
  std::cout << "[ figure ] hard failover: " << admitted << " admitted on a key of limit " << kLimit
            << " across the failover\n";
  ASSERT_TRUE(replica_took_over);
  ASSERT_TRUE(recovered) << "no decision 20 s after the master stopped";
  EXPECT_EQ(admitted, kLimit);
  // Put the old master back in charge, for the other tests.
  ASSERT_TRUE(wait_until([&] { return !is_master(master.port) && cluster_ok(); }, Ms(15000)));
  ASSERT_TRUE(promote(master.port));
  EXPECT_EQ(limiter.run(Op::acquire, key, 1).code, Code::ok);  // a denial, decided
}

// The port of the master serving `slot` in `nodes`.
int master_port_of(const std::vector<Node>& nodes, int slot) {
  for (const Node& n : nodes) {
    for (auto [first, last] : n.slots) {
      if (n.master && slot >= first && slot <= last) return n.port;
    }
  }
  return 0;
}

// A master stopped (SIGSTOP) with failovers held off: every node's
// cluster-node-timeout raised so that none calls it failing; at the end
// the master continued and the timeout put back, whatever the test does.
class StoppedMaster {
 public:
  explicit StoppedMaster(int port) {
    std::istringstream reply(cli(port, "config get cluster-node-timeout"));
    std::getline(reply, node_timeout_);  // the name, then the value
    std::getline(reply, node_timeout_);
    for (int p : all_ports()) cli(p, "config set cluster-node-timeout 600000");
    pid_ = std::stoi(shell("cat " + env_or_fail("RL_TEST_REDIS_DIR") + "/cluster-" +
                           std::to_string(port) + "/redis.pid"));
    stop();
  }
  ~StoppedMaster() {
    resume();
    for (int p : all_ports()) cli(p, "config set cluster-node-timeout " + node_timeout_);
  }
  bool stop() {
    stopped_ = kill(pid_, SIGSTOP) == 0;
    return stopped_;
  }
  void resume() {
    if (stopped_) kill(pid_, SIGCONT);
    stopped_ = false;
  }
  bool stopped() const { return stopped_; }

 private:
  std::string node_timeout_;  // to put back
  int pid_ = 0;
  bool stopped_ = false;
};

// What rl_store_format_metrics says of the breaker of the node at `port`:
// "0" closed, "1" open, "2" half-open, "" when it is not listed.
std::string node_breaker_state(Store& store, int port) {
  const std::string text = metrics_text(store.stats_view());
  const std::string line =
      "rl_node_breaker_state{node=\"127.0.0.1:" + std::to_string(port) + "\"} ";
  const size_t at = text.find(line);
  return at == std::string::npos ? "" : text.substr(at + line.size(), 1);
}

double p_quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<size_t>(q * static_cast<double>(samples.size()) + 0.999999);
  return samples[std::min(samples.size(), std::max<size_t>(rank, 1)) - 1];
}

// One dead master of three: once its breaker opens, calls for its slots
// take on_failure in microseconds, while the other two masters decide at
// the rate they did before and count exactly. (With one breaker for the
// store, the other masters' answers kept it closed and every call for the
// dead slots waited for its deadline.)
TEST(Cluster, ADeadMastersSlotsFailFastWhileTheOtherMastersDecide) {
  ASSERT_TRUE(wait_until(cluster_settled, Ms(15000)));
  constexpr int kTimeoutMs = 200;
  auto store = open_cluster("clock=manual&timeout_ms=" + std::to_string(kTimeoutMs) +
                            "&breaker_failures=3&breaker_cooldown_ms=1000");
  Settings open_settings = limiter_settings("gcra", "100/1h");
  open_settings.set("on_failure", "open");
  Limiter fail_open(store, open_settings);
  Limiter fail_closed(store, limiter_settings("gcra", "100/1h"));

  // Keys of the master that stops, and keys of the other two (each live
  // thread has its own).
  const std::vector<Node> nodes = cluster_nodes();
  const int dead_port = master_port_of(nodes, slot_of("dead-0"));
  ASSERT_NE(dead_port, 0);
  std::vector<std::string> dead_keys;
  std::vector<std::string> batch_keys;  // on the live masters, for one batch
  constexpr int kLiveThreads = 2;
  constexpr size_t kKeysPerThread = 8;
  std::vector<std::vector<std::string>> live_keys(kLiveThreads);
  std::set<int> live_ports;
  for (int k = 0;
       dead_keys.size() < 16 || batch_keys.size() < 8 || live_keys.back().size() < kKeysPerThread;
       ++k) {
    const std::string dead = "dead-" + std::to_string(k);
    if (master_port_of(nodes, slot_of(dead)) == dead_port && dead_keys.size() < 16)
      dead_keys.push_back(dead);
    const std::string in_batch = "batch-" + std::to_string(k);
    if (master_port_of(nodes, slot_of(in_batch)) != dead_port && batch_keys.size() < 8)
      batch_keys.push_back(in_batch);
    const std::string live = "live-" + std::to_string(k);
    const int port = master_port_of(nodes, slot_of(live));
    if (port == dead_port) continue;
    live_ports.insert(port);
    for (auto& keys : live_keys) {
      if (keys.size() < kKeysPerThread) {
        keys.push_back(live);
        break;
      }
    }
  }
  ASSERT_EQ(live_ports.size(), 2u) << "the live keys spread over both other masters";

  // Live threads decide on their keys all along; each phase counts its
  // decisions. Phase 0: every master up; 1: one stopped, its breaker not
  // yet open; then, its breaker open: 2 while it runs again, 3 while it is
  // stopped, 4 with calls for its slots too.
  std::atomic<int> phase{0};
  std::atomic<bool> running{true};
  std::array<std::atomic<int64_t>, 5> decided{};
  std::atomic<int> live_errors{0};
  std::vector<std::map<std::string, std::pair<int, int>>> tally(
      kLiveThreads);  // attempts, admitted
  std::vector<std::thread> threads;
  for (int t = 0; t < kLiveThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; running.load(); ++i) {
        const std::string& key = live_keys[t][i % kKeysPerThread];
        const int during = phase.load();
        const Outcome o = fail_closed.run(Op::acquire, key, 1);
        if (o.code != Code::ok || o.verdict.source != Source::store) {
          if (live_errors++ < 3) ADD_FAILURE() << "a live master's call: " << o.message;
          continue;
        }
        ++decided[during];
        auto& [attempts, admitted] = tally[t][key];
        ++attempts;
        admitted += o.verdict.allowed ? 1 : 0;
      }
    });
  }
  // Decisions per second in a window of the phase (a measuring window,
  // not a wait for some state).
  const auto measure = [&](int which, Ms window) {
    const int64_t before = decided[which].load();
    const auto started = Steady::now();
    std::this_thread::sleep_for(window);
    return static_cast<double>(decided[which].load() - before) /
           std::chrono::duration<double>(Steady::now() - started).count();
  };
  measure(0, Ms(300));  // connections made, functions loaded

  StoppedMaster stop(dead_port);
  ASSERT_TRUE(stop.stopped());
  phase = 1;
  // breaker_failures=3 outages of the stopped master open its breaker: the
  // calls wait for their deadline until one is answered at once.
  int opening_calls = 0;
  for (bool answered_at_once = false; !answered_at_once && opening_calls < 10; ++opening_calls) {
    const auto started = Steady::now();
    const Outcome o = fail_open.run(Op::acquire, dead_keys[0], 1);
    EXPECT_EQ(o.verdict.source, Source::fail_open) << o.message;
    EXPECT_LT(Steady::now() - started, Ms(kTimeoutMs) + kSlack) << "the deadline holds";
    answered_at_once = Steady::now() - started < Ms(kTimeoutMs / 2);
  }
  EXPECT_EQ(node_breaker_state(*store, dead_port), "1") << "the stopped master's breaker";
  for (int port : live_ports) EXPECT_EQ(node_breaker_state(*store, port), "0") << port;
  EXPECT_EQ(store->stats_view().breaker, BreakerState::open) << "the store's: the worst node's";
  // The other masters' rate with this one running and stopped, in
  // alternating windows, so that the noise of the (shared) machine falls on
  // both alike. Its breaker stays open throughout: nothing probes it.
  double rate_running = 0;
  double rate_stopped = 0;
  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    stop.resume();
    phase = 2;
    rate_running += measure(2, Ms(250)) / kRounds;
    ASSERT_TRUE(stop.stop());
    phase = 3;
    rate_stopped += measure(3, Ms(250)) / kRounds;
  }
  phase = 4;

  // Calls for the dead slots, among the live traffic: on_failure at once.
  std::vector<double> dead_us;
  const auto window = Steady::now();
  for (size_t i = 0; Steady::now() - window < Ms(900); ++i) {
    const std::string& key = dead_keys[i % dead_keys.size()];
    const bool open = i % 2 == 0;
    const auto started = Steady::now();
    const Outcome o = (open ? fail_open : fail_closed).run(Op::acquire, key, 1);
    dead_us.push_back(std::chrono::duration<double, std::micro>(Steady::now() - started).count());
    if (open) {
      EXPECT_EQ(o.verdict.source, Source::fail_open) << o.message;
    } else {
      EXPECT_EQ(o.code, Code::backend_unavailable);
      EXPECT_NE(o.message.find("circuit open"), std::string::npos) << o.message;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // pacing, not a wait for state
  }
  // A batch over every master: the dead node's part is answered by its
  // breaker, the others' parts by their masters.
  std::vector<Call> batch{Call{Op::acquire, dead_keys[1], 1, 0}};
  for (const std::string& key : batch_keys) batch.push_back(Call{Op::acquire, key, 1, 0});
  const auto batch_started = Steady::now();
  const std::vector<Outcome> batch_outcomes = fail_open.acquire_batch(batch);
  const auto batch_took = Steady::now() - batch_started;
  ASSERT_EQ(batch_outcomes.size(), batch.size());
  EXPECT_EQ(batch_outcomes[0].verdict.source, Source::fail_open) << batch_outcomes[0].message;
  for (size_t i = 1; i < batch.size(); ++i) {
    EXPECT_EQ(batch_outcomes[i].code, Code::ok) << batch_outcomes[i].message;
    EXPECT_EQ(batch_outcomes[i].verdict.source, Source::store) << "request " << i;
    EXPECT_TRUE(batch_outcomes[i].verdict.allowed) << "request " << i;
  }
  EXPECT_LT(batch_took, Ms(kTimeoutMs / 2)) << "no part waited for the dead node's deadline";
  running = false;
  for (auto& t : threads) t.join();

  // The master comes back: after the cool-down a probe closes its breaker
  // (once its connection is back: a probe that finds it still reconnecting
  // opens the breaker for another cool-down).
  stop.resume();
  Outcome probe;
  for (int tries = 0; tries < 20; ++tries) {
    manual_clock(*store).advance(1000 * 1000);
    probe = fail_open.run(Op::acquire, dead_keys[2], 1);
    if (probe.verdict.source == Source::store) break;
  }
  EXPECT_EQ(probe.verdict.source, Source::store) << probe.message;
  EXPECT_EQ(node_breaker_state(*store, dead_port), "0");
  EXPECT_EQ(store->stats_view().breaker, BreakerState::closed);

  // Exact counting on the live masters: each key admitted its limit or
  // every attempt, whichever is fewer.
  for (const auto& per_thread : tally) {
    for (const auto& [key, counts] : per_thread) {
      EXPECT_EQ(counts.second, std::min(counts.first, 100)) << key;
    }
  }
  EXPECT_EQ(live_errors.load(), 0);
  const double p50 = p_quantile(dead_us, 0.5);
  const double p99 = p_quantile(dead_us, 0.99);
  const double slowest = p_quantile(dead_us, 1.0);
  std::printf(
      "[ figure ] one of three masters stopped (noisy: shared machine): after its breaker "
      "opened (%d calls), %zu calls for its slots took p50 %.1f us, p99 %.1f us, max %.1f us; "
      "the other masters decided %.0f/s with it running and %.0f/s with it stopped (%.2fx; %d "
      "threads, %d alternating windows of 250 ms each)\n",
      opening_calls, dead_us.size(), p50, p99, slowest, rate_running, rate_stopped,
      rate_running > 0 ? rate_stopped / rate_running : 0.0, kLiveThreads, kRounds);
  EXPECT_LT(p99, 1000.0) << "p99 of calls for the dead master's slots, in us";
  EXPECT_GT(rate_stopped, rate_running * 0.5) << "the other masters decide as before, within noise";
  EXPECT_GT(dead_us.size(), 100u);
}

// A master that stops and is failed over, with the breakers on: its
// breaker opens, and once the store reads the new map (a probe after the
// cool-down fails and makes it read again) its slots go to the new
// master's breaker, closed; the old master, a replica now, is no longer
// listed, so the store's breaker is closed again.
TEST(Cluster, AFailedOverMastersSlotsMoveToTheNewMastersBreaker) {
  ASSERT_TRUE(wait_until(cluster_settled, Ms(15000)));
  auto store = open_cluster("timeout_ms=300&breaker_failures=3&breaker_cooldown_ms=200");
  Settings settings = limiter_settings("gcra", "100/1h");
  settings.set("on_failure", "open");
  Limiter limiter(store, settings);
  const std::string key = "breaker-failover";
  ASSERT_EQ(limiter.run(Op::acquire, key, 1).verdict.source, Source::store);
  const Node master = owner_of(slot_of(key));
  const Node replica = replica_of(master);
  const int pid = std::stoi(shell("cat " + env_or_fail("RL_TEST_REDIS_DIR") + "/cluster-" +
                                  std::to_string(master.port) + "/redis.pid"));
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  const auto stopped = Steady::now();
  // A real failover in real time: polled every 20 ms, as above.
  bool saw_open = false;
  bool recovered = false;
  std::optional<Steady::time_point> promoted;
  while (Steady::now() - stopped < std::chrono::seconds(20)) {
    const Outcome o = limiter.run(Op::acquire, key, 1);
    if (o.verdict.source == Source::store) {
      recovered = true;
      break;
    }
    saw_open = saw_open || node_breaker_state(*store, master.port) == "1";
    if (!promoted && is_master(replica.port)) promoted = Steady::now();
    std::this_thread::sleep_for(Ms(20));
  }
  const auto after_promotion =
      promoted ? std::chrono::duration_cast<Ms>(Steady::now() - *promoted).count() : -1;
  kill(pid, SIGCONT);  // it comes back as its replica's replica
  std::cout << "[ figure ] hard failover with breakers (breaker_failures=3, cooldown 200 ms, "
               "timeout_ms=300): first decision on the new master "
            << after_promotion << " ms after its promotion\n";
  EXPECT_TRUE(saw_open) << "the stopped master's breaker opened";
  EXPECT_TRUE(recovered) << "no decision 20 s after the master stopped";
  EXPECT_EQ(node_breaker_state(*store, replica.port), "0") << "the new master's breaker";
  EXPECT_EQ(node_breaker_state(*store, master.port), "") << "a replica now: not listed";
  EXPECT_EQ(store->stats_view().breaker, BreakerState::closed);
  // Put the old master back in charge, for the other tests.
  ASSERT_TRUE(wait_until([&] { return !is_master(master.port) && cluster_ok(); }, Ms(15000)));
  ASSERT_TRUE(promote(master.port));
  EXPECT_EQ(limiter.run(Op::acquire, key, 1).verdict.source, Source::store);
}

// Which of `keys` (each admitted once, limit 1/h) the node at `port` holds,
// asked directly (a redis:// store on that node, not the cluster's map): a
// key it remembers denies a peek. Empty when the node did not serve them all.
std::vector<bool> remembered_by(int port, const std::string& prefix,
                                const std::vector<std::string>& keys) {
  auto store = open_store("redis://:" + env_or_fail("RL_TEST_CLUSTER_PASSWORD") + "@127.0.0.1:" +
                              std::to_string(port) + "?clock=manual&prefix=" + prefix,
                          {});
  Limiter probe(store, limiter_settings("gcra", "1/h"));
  std::vector<bool> out;
  for (size_t from = 0; from < keys.size(); from += 500) {
    std::vector<Call> peeks;
    for (size_t i = from; i < std::min(keys.size(), from + 500); ++i)
      peeks.push_back(Call{Op::peek, keys[i], 1, 0});
    for (const Outcome& o : probe.acquire_batch(peeks)) {
      if (o.code != Code::ok) return {};  // MOVED: it no longer serves the slot
      out.push_back(!o.verdict.allowed);
    }
  }
  return out;
}

// Admissions a Cluster failover loses, counted key by key: one thread
// decides on keys of their own on one master's slots (limit 1/h, so each
// admitted key holds a state) while that master's replica takes over with
// CLUSTER FAILOVER FORCE (it does not wait for the master, which goes on
// taking writes until it hears of the new master); then the master that
// serves the keys once the cluster settled is asked for every key the thread
// saw admitted. (A replica that takes over moments after another failover
// may lose its slots again to the old master: the cluster keeps the higher
// config epoch. What it admitted meanwhile is lost too.) `min_replicas`:
// the store setting (0: off).
void count_admissions_lost_in_a_cluster_failover(int min_replicas) {
  const std::string prefix = unique_prefix();
  auto store = open_store(env_or_fail("RL_TEST_CLUSTER_URL") + "?prefix=" + prefix +
                              "&clock=manual&breaker_failures=0&timeout_ms=500&min_replicas=" +
                              std::to_string(min_replicas) +
                              (min_replicas > 0 ? "&min_replicas_timeout_ms=100" : ""),
                          {});
  Limiter limiter(store, limiter_settings("gcra", "1/h"));
  // The last failover settled: every node knows the same epoch (a replica
  // that asks for votes in a stale one loses its election, or wins one that
  // the old master then undoes) and the same map.
  ASSERT_TRUE(wait_until(cluster_settled, Ms(15000)));
  const Node master = owner_of(slot_of("f0"));
  const Node replica = replica_of(master);
  ASSERT_NE(replica.port, 0);
  // The master's keys, made as the calls need them: how many calls fit in
  // the wait below depends on the machine's speed, so no list made ahead
  // can be long enough (one of 30,000 ran out on a faster machine).
  int next_key = 0;
  auto master_key = [&] {
    for (;; ++next_key) {
      std::string key = "f" + std::to_string(next_key);
      if (holds(master, slot_of(key))) {
        ++next_key;
        return key;
      }
    }
  };
  const std::string first_key = master_key();
  const int slot = slot_of(first_key);
  AdmissionLedger ledger(limiter);
  ledger.decide(first_key);
  auto decide = [&] { return ledger.decide(master_key()); };
  for (int i = 1; i < 100; ++i) decide();  // before: replicated long before the failover

  const auto t0 = Steady::now();
  ASSERT_NE(cli(replica.port, "cluster failover force").find("OK"), std::string::npos);
  // Until the replica says it serves the keys' slot (asked again when a try
  // did not finish in 3 s: an election can fail, e.g. for want of votes).
  auto asked = t0;
  while (ledger.calls() % 50 != 0 || !serves(replica.port, slot)) {
    ASSERT_LT(Steady::now() - t0, std::chrono::seconds(30)) << "the replica never took over";
    if (Steady::now() - asked > std::chrono::seconds(3) && !is_master(replica.port)) {
      cli(replica.port, "cluster failover force");
      asked = Steady::now();
    }
    decide();
  }
  // Then until an admitted decision shows on the master that serves the slot.
  auto server = [&] { return serves(replica.port, slot) ? replica.port : master.port; };
  while (true) {
    ASSERT_LT(Steady::now() - t0, std::chrono::seconds(30)) << "the store never followed";
    if (!decide()) continue;
    const std::vector<bool> seen = remembered_by(server(), prefix, {ledger.admitted().back()});
    if (!seen.empty() && seen[0]) break;
  }
  ASSERT_TRUE(wait_until([&] { return epochs_agree() && cluster_ok(); }, Ms(15000)));
  const int now_serving = server();
  ASSERT_TRUE(serves(now_serving, slot));
  const std::vector<bool> kept = remembered_by(now_serving, prefix, ledger.admitted());
  const std::vector<bool> failed_kept = remembered_by(now_serving, prefix, ledger.failed());
  ASSERT_EQ(kept.size(), ledger.admitted().size());
  ASSERT_EQ(failed_kept.size(), ledger.failed().size());
  const int64_t lost = std::count(kept.begin(), kept.end(), false);
  const int64_t counted_anyway = std::count(failed_kept.begin(), failed_kept.end(), true);
  std::cout << "[ figure ] Cluster failover (FORCE"
            << (now_serving == master.port ? ", undone: the old master kept its slots" : "")
            << "), min_replicas=" << min_replicas << ": ";
  ledger.describe(std::cout, lost, counted_anyway);
  std::cout << "; " << std::chrono::duration_cast<Ms>(Steady::now() - t0).count() << " ms\n";
  if (min_replicas > 0) {
    EXPECT_EQ(lost, 0);
  }
  // Put the old master back in charge, for the other tests.
  if (now_serving == master.port) return;
  ASSERT_TRUE(wait_until([&] { return !is_master(master.port) && cluster_ok(); }, Ms(15000)));
  ASSERT_TRUE(promote(master.port));
  // In shape for the next test: every node agrees on the map (the TLS test
  // right after timed out on a node still converging).
  ASSERT_TRUE(wait_until([&] { return epochs_agree() && cluster_ok(); }, Ms(15000)));
}

TEST(Cluster, AFailoverLosesNoAdmissionWithMinReplicas) {
  count_admissions_lost_in_a_cluster_failover(1);
}

// The same without min_replicas: the figure it improves on (no bound asserted).
TEST(Cluster, AFailoverLosesAdmissionsWithoutMinReplicas) {
  count_admissions_lost_in_a_cluster_failover(0);
}

// rediss+cluster://: the same nodes' TLS ports; each node names its TLS
// ports to a TLS client, so every connection the map leads to is TLS too.
TEST(Cluster, RedissClusterRoutesOverTls) {
  const std::string url = env_or_fail("RL_TEST_CLUSTER_TLS_URL");
  auto store = open_store(url + "&prefix=" + unique_prefix(), {});
  Limiter limiter(store, limiter_settings("fixed_window", "2/1h"));
  for (int k = 0; k < 30; ++k) {
    int admitted = 0;
    for (int i = 0; i < 3; ++i) {
      const Outcome o = limiter.run(Op::acquire, "tls-" + std::to_string(k), 1);
      ASSERT_EQ(o.code, Code::ok) << o.message;
      admitted += o.verdict.allowed ? 1 : 0;
    }
    EXPECT_EQ(admitted, 2) << "key " << k;
  }
  // Another CA: no node is trusted, and the message says which setting.
  const std::string other_ca = env_or_fail("RL_TEST_TLS_DIR") + "/other-ca.pem";
  const std::string wrong = url.substr(0, url.find("tls_ca_file=")) + "tls_ca_file=" + other_ca;
  try {
    auto refused = open_store(wrong, {});
    Limiter probe(refused, limiter_settings("gcra", "1/s"));
    const Outcome o = probe.run(Op::acquire, "k", 1);
    EXPECT_NE(o.code, Code::ok);
    EXPECT_NE(o.message.find("tls_ca_file"), std::string::npos) << o.message;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tls_ca_file"), std::string::npos) << e.what();
  }
}

TEST(Cluster, UrlErrorsNameWhatIsWrong) {
  try {
    open_store(env_or_fail("RL_TEST_CLUSTER_URL") + "/1", {});
    FAIL() << "a database was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_arg);
    EXPECT_NE(std::string(e.what()).find("database"), std::string::npos) << e.what();
  }
  const std::string url = env_or_fail("RL_TEST_CLUSTER_URL");
  const std::string wrong = "redis+cluster://:wrong@" + url.substr(url.find('@') + 1);
  try {
    open_store(wrong, {});
    FAIL() << "a wrong password was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::auth) << e.what();
    EXPECT_EQ(std::string(e.what()).find("wrong"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rl::test
