// How rl's Lua code reaches Redis: a Functions library by default, scripts
// (EVALSHA) by choice or when the server or user cannot run Functions. The
// code going missing mid-run (FUNCTION FLUSH, SCRIPT FLUSH) is invisible
// and counts nothing twice.
#include <thread>

#include "redis_env.h"

namespace rl::test {
namespace {

using Ms = std::chrono::milliseconds;

// "cmdstat_fcall:calls=12,..." -> 12 (0 when Redis has not seen it).
int64_t command_calls(const std::string& command) {
  const std::string stats = redis_cli("info commandstats");
  const std::string tag = "cmdstat_" + command + ":calls=";
  const size_t at = stats.find(tag);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + tag.size()));
}

struct Flush {
  const char* mode;   // script_mode
  const char* flush;  // what empties the server of rl's code
};

class CodeFlushed : public ::testing::TestWithParam<Flush> {};

TEST_P(CodeFlushed, MidRunIsInvisibleAndCountsNothingTwice) {
  auto store = open_redis(std::string("clock=manual&script_mode=") + GetParam().mode);
  Limiter limiter(store, limiter_settings("sliding_log", "100000/h"));
  std::atomic<int64_t> admitted{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 300; ++i) {
        const Outcome o = limiter.run(Op::acquire, "k", 1);
        if (o.code != Code::ok) ++errors;
        if (o.verdict.allowed) ++admitted;
      }
    });
  }
  std::thread flusher([&] {
    for (int i = 0; i < 5; ++i) {
      redis_cli(GetParam().flush);
      std::this_thread::sleep_for(Ms(20));  // spread the flushes over the run
    }
  });
  for (auto& t : threads) t.join();
  flusher.join();
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(admitted, 1200);
  // Redis holds exactly the admitted units: none was counted twice.
  EXPECT_EQ(limiter.run(Op::peek, "k", 0).verdict.remaining, 100000 - 1200);
}

INSTANTIATE_TEST_SUITE_P(Modes, CodeFlushed,
                         ::testing::Values(Flush{"functions", "function flush"},
                                           Flush{"functions", "script flush"},
                                           Flush{"scripts", "script flush"},
                                           Flush{"scripts", "function flush"}),
                         [](const auto& info) {
                           return std::string(info.param.mode) + "_" +
                                  (info.param.flush[0] == 'f' ? "function" : "script") + "_flush";
                         });

TEST(Functions, AreTheDefaultAndLoadOneLibrary) {
  redis_cli("function flush");
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("gcra", "2/h"));
  const int64_t fcalls = command_calls("fcall");
  EXPECT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  EXPECT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  EXPECT_FALSE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  EXPECT_GE(command_calls("fcall"), fcalls + 3);
  const std::string libraries = redis_cli("function list libraryname 'rl_*'");
  EXPECT_NE(libraries.find("rl_"), std::string::npos) << libraries;
  EXPECT_NE(libraries.find("_gcra_acquire"), std::string::npos) << libraries;
}

TEST(Functions, AUserWhoMayNotRunThemFallsBackToScripts) {
  const std::string user = "rl-nofn-" + std::to_string(getpid());
  ASSERT_EQ(redis_cli("acl setuser " + user + " on '>pw' '~*' '&*' +@all -fcall -function"),
            "OK\n");
  auto store = open_store("redis://" + user + ":pw@127.0.0.1:" + env_or_fail("RL_TEST_REDIS_PORT") +
                              "?prefix=" + unique_prefix(),
                          {});
  Limiter limiter(store, limiter_settings("fixed_window", "2/h"));
  EXPECT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  EXPECT_TRUE(limiter.run(Op::acquire, "k", 1).verdict.allowed);
  const Outcome third = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(third.code, Code::ok) << third.message;
  EXPECT_FALSE(third.verdict.allowed);
  store->close();
  redis_cli("acl deluser " + user);
}

TEST(Functions, AnUnknownScriptModeIsRefused) {
  try {
    open_redis("script_mode=lua");
    FAIL() << "script_mode=lua was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_arg);
    EXPECT_NE(std::string(e.what()).find("script_mode"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rl::test
