// A store on a server with rl's Redis module (script_mode, docs/redis-module.md):
// auto finds the module and decides with RL.* commands, also over TLS,
// coalesced calls leave as RL.BATCH and decide as the memory store does one
// by one, min_replicas holds, script_mode=module on a server without the
// module fails naming the node, and a node found without it is asked again
// once its connection is made again (a MODULE LOAD on a running server).
#include <random>

#include "burst_check.h"
#include "completions.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Ms = std::chrono::milliseconds;

std::string module_url(const std::string& extra) {
  return env_or_fail("RL_TEST_REDIS_MODULE_URL") + "?prefix=" + unique_prefix() +
         (extra.empty() ? "" : "&" + extra);
}

// "cmdstat_rl.batch:calls=12,..." on the module's server (or `server`) -> 12.
int64_t calls_of(const std::string& command,
                 const std::string& server = env_or_fail("RL_TEST_REDIS_MODULE_URL")) {
  const std::string stats = shell("redis-cli -u " + server + " info commandstats");
  const std::string tag = "cmdstat_" + command + ":calls=";
  const size_t at = stats.find(tag);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + tag.size()));
}

// Eight acquires of a 5/h gcra limiter on `store`: five admitted, each one
// RL.ACQUIRE on the module's server, none an FCALL.
void expect_decided_by_the_module(const auto& store) {
  Limiter limiter(store, limiter_settings("gcra", "5/h"));
  const int64_t acquires = calls_of("rl.acquire"), fcalls = calls_of("fcall");
  int allowed = 0;
  for (int i = 0; i < 8; ++i) {
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    allowed += o.verdict.allowed;
  }
  EXPECT_EQ(allowed, 5);
  EXPECT_EQ(calls_of("rl.acquire") - acquires, 8);
  EXPECT_EQ(calls_of("fcall") - fcalls, 0);
}

TEST(ModuleStore, AutoDecidesWithTheModuleWhereLoaded) {
  auto store = open_store(module_url(""), {});  // script_mode=auto by default
  expect_decided_by_the_module(store);
  // The choice shows in the store's metrics (rl_store_format_metrics) and
  // in rl_store_describe (rl_store_info version 2).
  const DecidesWith with = store->decides_with();
  EXPECT_STREQ(with.script_mode, "auto");
  EXPECT_STREQ(with.lua, "functions");
  EXPECT_EQ(with.module_nodes, 1u);
  EXPECT_EQ(with.lua_nodes, 0u);
  EXPECT_EQ(decides_with_text(with), "auto (module on 1 of 1 nodes seen, else functions)");
  auto plain = open_redis("");
  EXPECT_EQ(decides_with_text(plain->decides_with()),
            "auto (module on 0 of 0 nodes seen, else functions)");  // nothing asked yet
  Limiter lua(plain, limiter_settings("gcra", "5/h"));
  ASSERT_EQ(lua.run(Op::acquire, "k", 1).code, Code::ok);
  EXPECT_EQ(decides_with_text(plain->decides_with()),
            "auto (module on 0 of 1 nodes seen, else functions)");
  EXPECT_EQ(plain->decides_with().lua_nodes, 1u);
  const DecidesWith scripts = open_redis("script_mode=scripts")->decides_with();
  EXPECT_STREQ(scripts.script_mode, "scripts");
  EXPECT_STREQ(scripts.lua, "scripts");
  EXPECT_EQ(decides_with_text(scripts), "scripts");
  const DecidesWith module = open_store(module_url("script_mode=module"), {})->decides_with();
  EXPECT_STREQ(module.script_mode, "module");
  EXPECT_EQ(module.module_nodes + module.lua_nodes, 0u);  // counted under auto only
  EXPECT_EQ(decides_with_text(module), "module");
}

// rediss:// to a server with the module: the same RL.* commands, over TLS.
TEST(ModuleStore, OverTlsDecidesWithTheModule) {
  for (const char* mode : {"auto", "module"}) {
    SCOPED_TRACE(mode);
    auto store = open_store(env_or_fail("RL_TEST_REDISS_MODULE_URL") +
                                "&prefix=" + unique_prefix() + "&script_mode=" + mode,
                            {});
    expect_decided_by_the_module(store);
    EXPECT_EQ(store->decides_with().lua_nodes, 0u);
  }
}

// Bursts of async calls (all but the first wait and leave as one RL.BATCH)
// decide what the memory store decides for the same calls one by one.
TEST(ModuleStore, CoalescedCallsLeaveAsRlBatchAndDecideAsTheMemoryStore) {
  for (const char* algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm);
    Settings settings = limiter_settings(algorithm, "20/s, 50/10s");
    auto memory = open_store("memory://?clock=manual", {});
    auto redis = open_store(module_url("clock=manual&script_mode=module"), {});
    Limiter on_memory(memory, settings);
    Limiter on_redis(redis, settings);
    manual_clock(*memory).set(1'700'000'000'000'000);
    manual_clock(*redis).set(1'700'000'000'000'000);
    std::mt19937_64 random(42);
    const int64_t batches = calls_of("rl.batch");
    for (int burst = 0; burst < 20; ++burst) {
      std::vector<Call> calls;
      for (int i = 0; i < 40; ++i) {
        const int pick = static_cast<int>(random() % 100);
        const Op op = pick < 75   ? Op::acquire
                      : pick < 88 ? Op::peek
                      : pick < 98 ? Op::refund
                                  : Op::reset;
        const int64_t cost = op == Op::reset ? 0 : 1 + static_cast<int64_t>(random() % 4);
        calls.push_back(Call{op, "k" + std::to_string(random() % 3), cost});
      }
      SCOPED_TRACE("burst " + std::to_string(burst));
      expect_burst_decides_as_memory(on_redis, on_memory, calls);
      if (::testing::Test::HasFatalFailure()) return;
      const int64_t step = static_cast<int64_t>(random() % 700'000);
      manual_clock(*memory).advance(step);
      manual_clock(*redis).advance(step);
    }
    EXPECT_GT(calls_of("rl.batch"), batches);
  }
}

// Bursts of one limiter's acquires (one operation, the server's clock, the
// same limits) leave as RL.MANY, its name, clock and limits sent once, and
// decide as the memory store does them one by one.
TEST(ModuleStore, OneLimitersCoalescedCallsLeaveAsRlManyAndDecideAsTheMemoryStore) {
  for (const char* algorithm : kAlgorithms) {
    SCOPED_TRACE(algorithm);
    Settings settings = limiter_settings(algorithm, "20/s, 50/10s");
    auto memory = open_store("memory://?clock=manual", {});
    auto redis = open_store(module_url("clock=manual&script_mode=module"), {});
    Limiter on_memory(memory, settings);
    Limiter on_redis(redis, settings);
    manual_clock(*memory).set(1'700'000'000'000'000);
    manual_clock(*redis).set(1'700'000'000'000'000);
    std::mt19937_64 random(43);
    const int64_t many = calls_of("rl.many");
    for (int burst = 0; burst < 10; ++burst) {
      std::vector<Call> calls;
      for (int i = 0; i < 40; ++i) {
        calls.push_back(Call{Op::acquire, "m" + std::to_string(random() % 5),
                             1 + static_cast<int64_t>(random() % 3)});
      }
      SCOPED_TRACE("burst " + std::to_string(burst));
      expect_burst_decides_as_memory(on_redis, on_memory, calls);
      if (::testing::Test::HasFatalFailure()) return;
      const int64_t step = static_cast<int64_t>(random() % 700'000);
      manual_clock(*memory).advance(step);
      manual_clock(*redis).advance(step);
    }
    EXPECT_GT(calls_of("rl.many"), many);
  }
}

// A node that refuses RL.MANY (here a user not allowed it; a module older
// than RL.MANY alike): the refused batch's calls go again one by one, and
// the node's later batches go as RL.BATCH; every call decides as alone.
TEST(ModuleStore, ANodeThatRefusesRlManyGetsRlBatch) {
  const std::string url = env_or_fail("RL_TEST_REDIS_MODULE_URL");
  shell("redis-cli -u " + url + " ACL SETUSER rl-no-many on '>pw' '~*' '&*' +@all -rl.many");
  const std::string hostport = url.substr(url.find("://") + 3);
  const std::string as_user = "redis://rl-no-many:pw@" + hostport + "?prefix=" + unique_prefix() +
                              "&clock=manual&script_mode=module";
  Settings settings = limiter_settings("gcra", "20/s, 50/10s");
  auto memory = open_store("memory://?clock=manual", {});
  auto redis = open_store(as_user, {});
  Limiter on_memory(memory, settings);
  Limiter on_redis(redis, settings);
  manual_clock(*memory).set(1'700'000'000'000'000);
  manual_clock(*redis).set(1'700'000'000'000'000);
  const int64_t many = calls_of("rl.many"), batches = calls_of("rl.batch");
  for (int burst = 0; burst < 5; ++burst) {
    std::vector<Call> calls;
    for (int i = 0; i < 30; ++i) calls.push_back(Call{Op::acquire, "n" + std::to_string(i % 4), 1});
    SCOPED_TRACE("burst " + std::to_string(burst));
    expect_burst_decides_as_memory(on_redis, on_memory, calls);
    if (::testing::Test::HasFatalFailure()) return;
    manual_clock(*memory).advance(300'000);
    manual_clock(*redis).advance(300'000);
  }
  EXPECT_EQ(calls_of("rl.many"), many);
  EXPECT_GT(calls_of("rl.batch"), batches);
  shell("redis-cli -u " + url + " ACL DELUSER rl-no-many");
}

TEST(ModuleStore, MinReplicasWaitsForTheModulesReplica) {
  auto store = open_store(module_url("min_replicas=1&min_replicas_timeout_ms=5000"), {});
  Limiter limiter(store, limiter_settings("fixed_window", "3/h"));
  for (int i = 0; i < 4; ++i) {
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    EXPECT_EQ(o.verdict.allowed, i < 3);
  }
}

TEST(ModuleStore, ModuleModeOnAServerWithoutItFailsNamingTheNode) {
  auto store = open_redis("script_mode=module&breaker_failures=0");
  Limiter limiter(store, limiter_settings("gcra", "5/h"));
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::backend_error) << o.message;
  EXPECT_NE(o.message.find("script_mode=module"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("has no rl module"), std::string::npos) << o.message;
}

// A node found without the module is asked again once its connection is
// made again: a MODULE LOAD on a running server is picked up without
// reopening the store, and no call is counted twice on the way.
TEST(ModuleStore, ANodeFoundWithoutTheModuleIsAskedAgainWhenItsConnectionIsMadeAgain) {
  const std::string server = env_or_fail("RL_TEST_REDIS_MODULE_LATER_URL");
  const std::string cli = "redis-cli -u " + server + " ";
  struct Unload {  // the server as it was, whatever happens
    std::string cli;
    ~Unload() { shell(cli + "module unload rl"); }
  } unload{cli};
  ASSERT_EQ(shell(cli + "module list"), "\n") << "the server must start without the module";
  auto store = open_store(server + "?prefix=" + unique_prefix(), {});  // script_mode=auto
  Limiter limiter(store, limiter_settings("fixed_window", "10/h"));
  auto acquire = [&] {
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    ASSERT_TRUE(o.verdict.allowed);
  };
  for (int i = 0; i < 3; ++i) acquire();
  EXPECT_EQ(store->decides_with().lua_nodes, 1u);

  // Loaded while the store is open: its connection still goes as Lua.
  ASSERT_EQ(shell(cli + "module load " + env_or_fail("RL_TEST_REDIS_MODULE")), "OK\n");
  for (int i = 0; i < 2; ++i) acquire();
  EXPECT_EQ(calls_of("rl.acquire", server), 0);
  EXPECT_EQ(store->decides_with().lua_nodes, 1u);

  // The connection is lost and made again: the node is asked again. Calls
  // fail until the store has connected again (the server closed the
  // connection, so none of them ran); peeks record nothing anyway.
  ASSERT_EQ(shell(cli + "client kill type normal"), "1\n");
  Outcome o;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    o = limiter.run(Op::peek, "k", 1);
  } while (o.code != Code::ok && std::chrono::steady_clock::now() < until);
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_EQ(o.verdict.remaining, 4);  // 10 - 5 acquired - the 1 this peek would take
  EXPECT_EQ(calls_of("rl.peek", server), 1);
  const int64_t fcalls = calls_of("fcall", server);
  for (int i = 0; i < 3; ++i) acquire();
  EXPECT_EQ(calls_of("rl.acquire", server), 3);
  EXPECT_EQ(calls_of("fcall", server), fcalls);
  const DecidesWith with = store->decides_with();
  EXPECT_EQ(with.module_nodes, 1u);
  EXPECT_EQ(with.lua_nodes, 0u);
  // 3 + 2 + 3 acquired, each counted once.
  o = limiter.run(Op::peek, "k", 1);
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_EQ(o.verdict.remaining, 1);
}

}  // namespace
}  // namespace rl::test
