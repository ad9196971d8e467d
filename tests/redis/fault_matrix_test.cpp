// The failure policy's fault matrix: each fault (in the network, through the
// fault proxy, or on the server) under each on_failure, with its figures:
// the worst overshoot of a call past its deadline, the decisions during the
// fault by source, how long the store took to decide from Redis again after
// the fault ended, and that every async call completed exactly once and
// Redis never admitted more than its limit. Each run prints a [matrix] line;
// docs/failure.md holds the table.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "completions.h"
#include "failover/failover_store.h"
#include "fault_proxy.h"
#include "redis_env.h"

namespace rl::test {
namespace {

using Steady = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

constexpr Ms kTimeout{100};
constexpr Ms kSlack{150};  // timers on a loaded 2-vCPU machine, sanitizers
constexpr int64_t kLimit = 40;
constexpr int kCallsDuringFault = 24;

// What a fault does to the calls made during it.
enum class Effect {
  outage,      // unavailable or timeout: the failure policy decides
  none,        // nothing the caller sees: every decision from Redis
  error_reply  // Redis answers with an error: not an outage, never failed open
};

struct Fault {
  const char* name;
  std::function<void(FaultProxy&)> start;
  std::function<void(FaultProxy&)> stop;
  Effect effect = Effect::outage;
};

std::string cli_command() {
  return "redis-cli -p " + env_or_fail("RL_TEST_REDIS_PORT") + " ";
}

int redis_pid() {
  std::ifstream in(env_or_fail("RL_TEST_REDIS_DIR") + "/redis.pid");
  int pid = 0;
  in >> pid;
  return pid;
}

void wait_for_pong() {
  const auto deadline = Steady::now() + std::chrono::seconds(5);
  while (redis_cli("ping").find("PONG") == std::string::npos && Steady::now() < deadline) {
    std::this_thread::sleep_for(Ms(10));
  }
}

const Fault kFaults[] = {
    {"latency 20 ms (within the deadline)", [](FaultProxy& p) { p.set_delay(Ms(20)); },
     [](FaultProxy& p) { p.set_delay(Ms(0)); }},
    {"latency 300 ms (beyond the deadline)", [](FaultProxy& p) { p.set_delay(Ms(300)); },
     [](FaultProxy& p) { p.set_delay(Ms(0)); }},
    {"blackhole (half-open, new connections too)",
     [](FaultProxy& p) {
       p.set_new_connections_half_open(true);
       p.go_half_open();
     },
     [](FaultProxy& p) { p.set_new_connections_half_open(false); }},
    {"connection reset mid-stream", [](FaultProxy& p) { p.reset(); }, [](FaultProxy&) {}},
    {"slow drip (1 byte per 5 ms)", [](FaultProxy& p) { p.set_drip(Ms(5)); },
     [](FaultProxy& p) { p.set_drip(Ms(0)); }},
    {"proxy restart (down, then up on its port)", [](FaultProxy& p) { p.go_down(); },
     [](FaultProxy& p) { p.come_back(); }},
    {"CLIENT PAUSE", [](FaultProxy&) { redis_cli("client pause 10000 write"); },
     [](FaultProxy&) { redis_cli("client unpause"); }},
    {"SIGSTOP / SIGCONT", [](FaultProxy&) { kill(redis_pid(), SIGSTOP); },
     [](FaultProxy&) { kill(redis_pid(), SIGCONT); }},
    {"DEBUG SLEEP 0.6 s",
     [](FaultProxy&) {
       shell("(" + cli_command() + "debug sleep 0.6 >/dev/null 2>&1 &)");
       // The server cannot say when the sleep began (it answers nothing
       // then): give the background redis-cli time to send it.
       std::this_thread::sleep_for(Ms(100));
     },
     [](FaultProxy&) { wait_for_pong(); }},
    {"CLIENT KILL of every client", [](FaultProxy&) { redis_cli("client kill type normal"); },
     [](FaultProxy&) {}},
    {"SCRIPT FLUSH", [](FaultProxy&) { redis_cli("script flush"); }, [](FaultProxy&) {},
     Effect::none},
    {"FUNCTION FLUSH", [](FaultProxy&) { redis_cli("function flush"); }, [](FaultProxy&) {},
     Effect::none},
    {"maxmemory with noeviction (OOM)",
     [](FaultProxy&) {
       redis_cli("config set maxmemory-policy noeviction");
       redis_cli("config set maxmemory 1");
     },
     [](FaultProxy&) { redis_cli("config set maxmemory 0"); }, Effect::error_reply},
    {"kill -9 and restart", [](FaultProxy&) { kill(redis_pid(), SIGKILL); },
     [](FaultProxy&) {
       std::this_thread::sleep_for(Ms(100));  // the old process's port is free
       shell("bash " + env_or_fail("RL_TEST_REDIS_DIR") + "/start");
       wait_for_pong();
     }},
};

const char* const kPolicies[] = {"closed", "open", "local"};

struct Figures {
  int64_t overshoot_ms = 0;         // worst call past its deadline (0 when none)
  int64_t slowest_fallback_us = 0;  // worst decision while the breaker was open
  int by_source[3] = {0, 0, 0};
  int errors = 0;
  int64_t recovery_ms = -1;  // fault ended -> first decision from Redis
};

class FaultMatrix : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(FaultMatrix, DeadlinesRecoveryAndExactCounts) {
  const Fault& fault = kFaults[std::get<0>(GetParam())];
  const char* policy = kPolicies[std::get<1>(GetParam())];
  FaultProxy proxy(std::stoi(env_or_fail("RL_TEST_REDIS_PORT")));
  auto store = open_store("redis://127.0.0.1:" + std::to_string(proxy.port()) + "?prefix=" +
                              unique_prefix() + "&timeout_ms=" + std::to_string(kTimeout.count()) +
                              "&liveness_timeout_ms=300&connect_timeout_ms=100"
                              "&reconnect_max_ms=50&breaker_failures=3&breaker_cooldown_ms=200",
                          {});
  auto& breaker = dynamic_cast<FailoverStore&>(*store).breaker();
  Settings settings = limiter_settings("gcra", std::to_string(kLimit) + "/h");
  settings.set("on_failure", policy);
  if (std::string(policy) == "local") settings.set("local_share", "1/2");
  Limiter limiter(store, settings);
  // The server is up (an earlier fault may have just ended) and this
  // store's first connection is made: the first decision comes from Redis.
  wait_for_pong();
  Outcome first = limiter.run(Op::acquire, "k", 1);
  for (int i = 0; i < 100 && (first.code != Code::ok || first.verdict.source != Source::store);
       ++i) {
    std::this_thread::sleep_for(Ms(50));
    first = limiter.run(Op::acquire, "k", 1);
  }
  ASSERT_EQ(first.code, Code::ok) << first.message;
  ASSERT_EQ(first.verdict.source, Source::store);
  ASSERT_TRUE(first.verdict.allowed);
  int store_admitted = 1;

  Figures f;
  auto decide = [&] {
    // A call that starts with the breaker open is answered by the policy at
    // once, unless the cool-down has passed and it is the probe (which then
    // waits for the store, and opens the breaker again if that fails).
    const bool open_before = breaker.state() == BreakerState::open;
    const int64_t opened_before = breaker.times_opened();
    const auto start = Steady::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    const auto took = Steady::now() - start;
    const bool breaker_was_open = open_before && breaker.times_opened() == opened_before &&
                                  breaker.state() == BreakerState::open;
    f.overshoot_ms =
        std::max<int64_t>(f.overshoot_ms, std::chrono::duration_cast<Ms>(took - kTimeout).count());
    if (o.code != Code::ok) {
      if (fault.effect == Effect::error_reply) {
        EXPECT_EQ(o.code, Code::backend_error) << o.message;
      } else {
        EXPECT_TRUE(o.code == Code::timeout || o.code == Code::backend_unavailable) << o.message;
      }
      ++f.errors;
    } else {
      ++f.by_source[static_cast<int>(o.verdict.source)];
      if (o.verdict.source == Source::store && o.verdict.allowed) ++store_admitted;
    }
    if (breaker_was_open && o.verdict.source != Source::store) {
      f.slowest_fallback_us =
          std::max<int64_t>(f.slowest_fallback_us,
                            std::chrono::duration_cast<std::chrono::microseconds>(took).count());
    }
    return o;
  };

  fault.start(proxy);
  Completions async_calls(kCallsDuringFault);
  for (int i = 0; i < kCallsDuringFault; ++i) {
    limiter.run_async(Call{Op::acquire, "a", 1}, async_calls.for_call(i));
    decide();
  }
  fault.stop(proxy);
  const auto ended = Steady::now();
  while (Steady::now() - ended < std::chrono::seconds(5)) {
    const Outcome o = decide();
    if (o.code == Code::ok && o.verdict.source == Source::store) {
      f.recovery_ms = std::chrono::duration_cast<Ms>(Steady::now() - ended).count();
      break;
    }
    std::this_thread::sleep_for(Ms(5));
  }
  ASSERT_TRUE(async_calls.wait_all(kTimeout + kSlack + Ms(1000)));
  for (int runs : async_calls.runs) EXPECT_EQ(runs, 1) << "an async call completed twice or never";

  std::printf(
      "[matrix] %s | %s | overshoot %lld ms | store %d, fail_open %d, local %d, "
      "errors %d | breaker-open decision <= %lld us | recovery %lld ms\n",
      fault.name, policy, static_cast<long long>(f.overshoot_ms), f.by_source[0], f.by_source[1],
      f.by_source[2], f.errors, static_cast<long long>(f.slowest_fallback_us),
      static_cast<long long>(f.recovery_ms));
  EXPECT_LE(f.overshoot_ms, kSlack.count()) << "a call overran its deadline";
  EXPECT_GE(f.recovery_ms, 0) << "no decision from Redis within 5 s of the fault's end";
  EXPECT_LE(f.recovery_ms, 200 + 300 + kSlack.count()) << "cool-down + liveness + slack";
  // Microseconds on an idle machine; the bound is for a loaded one.
  EXPECT_LE(f.slowest_fallback_us, 50000) << "an open breaker decided slowly";
  if (fault.effect == Effect::none) {
    EXPECT_EQ(f.errors + f.by_source[1] + f.by_source[2], 0);
  }
  if (fault.effect == Effect::error_reply) {
    // An error reply is not an outage: no policy hides it.
    EXPECT_EQ(f.by_source[1] + f.by_source[2], 0);
    EXPECT_EQ(f.errors, kCallsDuringFault);
  } else if (std::string(policy) != "closed") {
    // The policy decided every call Redis could not: errors only when closed.
    EXPECT_EQ(f.errors, 0);
  } else {
    EXPECT_EQ(f.by_source[1] + f.by_source[2], 0);
  }
  // Redis never admitted more than its limit, and holds at least what it
  // answered as admitted (a timed-out call may have counted too, once).
  EXPECT_LE(store_admitted, kLimit);
  if (std::string(fault.name).find("restart") == std::string::npos) {
    const Outcome state = limiter.run(Op::peek, "k", 0);
    ASSERT_EQ(state.verdict.source, Source::store) << state.message;
    EXPECT_LE(store_admitted, kLimit - state.verdict.remaining);
  }
}

std::string name_of(const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
  std::string name = kFaults[std::get<0>(info.param)].name;
  std::string out;
  for (char c : name.substr(0, name.find(' ', 8)))
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out + "_" + std::to_string(std::get<0>(info.param)) + "_" +
         kPolicies[std::get<1>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(EveryFaultEveryPolicy, FaultMatrix,
                         ::testing::Combine(::testing::Range(0, int(std::size(kFaults))),
                                            ::testing::Range(0, int(std::size(kPolicies)))),
                         name_of);

}  // namespace
}  // namespace rl::test
