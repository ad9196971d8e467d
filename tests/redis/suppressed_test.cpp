// algorithm=suppressed on Redis decides as on memory://, draw for draw:
// random sequences of operations, and the steady and evenly spaced
// overloads of tests/unit/suppressed_test.cpp call by call.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "../unit/suppressed_load.h"
#include "clock.h"
#include "completions.h"
#include "config/policy.h"
#include "redis_env.h"

namespace rl::test {
namespace {

struct Config {
  const char* limit;
  const char* hard_limit_factor;
  const char* factor_reuse;  // or nullptr
  const char* granularity;   // or nullptr
};

void PrintTo(const Config& c, std::ostream* os) {
  *os << "limit=" << c.limit << " hard_limit_factor=" << c.hard_limit_factor
      << (c.factor_reuse ? " factor_reuse=" : "") << (c.factor_reuse ? c.factor_reuse : "")
      << (c.granularity ? " granularity=" : "") << (c.granularity ? c.granularity : "");
}

const Config kConfigs[] = {
    {"6/s", "1", nullptr, nullptr},
    {"6/s", "2.5", nullptr, nullptr},
    {"10/2s", "1.5", "1ms", "500ms"},
    {"5/s, 12/4s", "3", "300ms", nullptr},
    {"40/10s", "1000", "1us", "1s"},
    // Sums and products near the limits of Lua's exact doubles.
    {"1099511627776/366d", "1", nullptr, nullptr},
    {"1000000000/1d, 7/s", "1.001", "1s", nullptr},
};

Settings settings_of(const Config& c) {
  Settings s = limiter_settings("suppressed", c.limit);
  s.set("hard_limit_factor", c.hard_limit_factor);
  if (c.factor_reuse) s.set("factor_reuse", c.factor_reuse);
  if (c.granularity) s.set("granularity", c.granularity);
  s.set("seed", "11");
  return s;
}

std::string describe(const Verdict& v) {
  return "{allowed " + std::to_string(v.allowed) + ", limit " + std::to_string(v.limit) +
         ", remaining " + std::to_string(v.remaining) + ", retry " +
         std::to_string(v.retry_after_us) + ", reset " + std::to_string(v.reset_after_us) +
         ", index " + std::to_string(v.limit_index) + ", factor " +
         std::to_string(v.suppression_factor) + "}";
}

// The same limiter on memory:// and on Redis, both under the manual clock.
// Batches of up to 200 suppressed calls: a loaded machine may hold one past
// the default deadline, which is not what these tests measure.
struct BothStores {
  explicit BothStores(const Settings& settings)
      : memory(open_store("memory://?clock=manual", {})),
        redis(open_redis("clock=manual&timeout_ms=60000")),
        on_memory(memory, settings),
        on_redis(redis, settings) {}
  std::shared_ptr<Store> memory;
  std::shared_ptr<Store> redis;
  Limiter on_memory;
  Limiter on_redis;
};

// Every call of two runs of the same load decided alike, with the same
// suppression factors.
template <class Run>
void expect_decided_alike(const Run& m, const Run& r) {
  ASSERT_EQ(r.decisions.size(), m.decisions.size());
  const auto first_difference =
      std::mismatch(m.decisions.begin(), m.decisions.end(), r.decisions.begin()).first -
      m.decisions.begin();
  EXPECT_EQ(r.decisions, m.decisions) << "first difference at call " << first_difference;
  EXPECT_EQ(r.factors, m.factors);
}

class SuppressedEquivalence : public ::testing::TestWithParam<Config> {};

TEST_P(SuppressedEquivalence, RandomSequencesDecideAsTheMemoryStore) {
  const Settings settings = settings_of(GetParam());
  BothStores both(settings);
  auto& [memory, redis, on_memory, on_redis] = both;
  const int64_t start = 1'700'000'000'000'000;
  manual_clock(*memory).set(start);
  manual_clock(*redis).set(start);
  int64_t hard = kMaxLimit, window = 0;
  for (const Rate& r : on_memory.policy().rates) {
    hard = std::min(hard, r.burst);
    window = std::max(window, r.window_us);
  }
  std::mt19937_64 random(std::hash<std::string>{}(GetParam().limit));
  auto below = [&](int64_t n) { return static_cast<int64_t>(random() % static_cast<uint64_t>(n)); };
  int allowed = 0, denied = 0, in_band = 0;
  for (int step = 0; step < 600; ++step) {
    const int pick = static_cast<int>(below(100));
    if (pick < 20) {
      const int64_t advance = below(8) == 0 ? below(2 * window) : below(window / 20 + 1);
      manual_clock(*memory).advance(advance);
      manual_clock(*redis).advance(advance);
      continue;
    }
    const Op op = pick < 80   ? Op::acquire
                  : pick < 90 ? Op::peek
                  : pick < 98 ? Op::refund
                              : Op::reset;
    const std::string key = "k" + std::to_string(below(2));
    int64_t cost = op == Op::reset ? 0 : 1 + below(std::min<int64_t>(hard, 4));
    if (op == Op::acquire && below(25) == 0) cost = std::min(hard + 1, kMaxLimit);
    const Outcome m = on_memory.run(op, key, cost);
    const Outcome r = on_redis.run(op, key, cost);
    ASSERT_EQ(r.code, Code::ok) << r.message;
    ASSERT_EQ(describe(r.verdict), describe(m.verdict))
        << "step " << step << ": op " << static_cast<int>(op) << " key " << key << " cost " << cost;
    if (op == Op::acquire) {
      (m.verdict.allowed ? allowed : denied)++;
      in_band += m.verdict.suppression_factor > 0 && m.verdict.suppression_factor < 1 ? 1 : 0;
    }
  }
  // The sequence reaches every regime it can: admitted, denied, and (with a
  // band) factors strictly between 0 and 1.
  EXPECT_GT(allowed, 0);
  EXPECT_GT(denied, 0);
  std::printf("%s: %d admitted, %d denied, %d decided in the band\n", GetParam().limit, allowed,
              denied, in_band);
}

INSTANTIATE_TEST_SUITE_P(Configs, SuppressedEquivalence, ::testing::ValuesIn(kConfigs),
                         [](const auto& info) { return "config_" + std::to_string(info.index); });

// Async calls made back to back leave as coalesced batches (one FCALL of
// the batch function): each carries its own draw in its cost argument and
// is decided as the memory store decides the same calls one by one.
TEST(SuppressedCoalescing, BatchedCallsCarryTheirDrawsAndDecideAsTheMemoryStore) {
  const Settings settings = settings_of({"20/s, 50/10s", "2", "1ms", nullptr});
  BothStores both(settings);
  auto& [memory, redis, on_memory, on_redis] = both;
  manual_clock(*memory).set(1'700'000'000'000'000);
  manual_clock(*redis).set(1'700'000'000'000'000);
  std::mt19937_64 random(42);
  int in_band = 0;
  for (int burst = 0; burst < 30; ++burst) {
    std::vector<Call> calls;
    for (int i = 0; i < 40; ++i) {
      const int pick = static_cast<int>(random() % 100);
      const Op op = pick < 80   ? Op::acquire
                    : pick < 90 ? Op::peek
                    : pick < 98 ? Op::refund
                                : Op::reset;
      const int64_t cost = op == Op::reset ? 0 : 1 + static_cast<int64_t>(random() % 4);
      calls.push_back(Call{op, "k" + std::to_string(random() % 2), cost});
    }
    Completions done(calls.size());
    std::vector<Outcome> got(calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      on_redis.run_async(calls[i], [&, i, record = done.for_call(i)](Outcome&& o) mutable {
        got[i] = o;
        record(std::move(o));
      });
    }
    ASSERT_TRUE(done.wait_all(std::chrono::milliseconds(10000)));
    for (size_t i = 0; i < calls.size(); ++i) {
      ASSERT_EQ(got[i].code, Code::ok) << got[i].message;
      const Outcome want = on_memory.run(calls[i].op, calls[i].key, calls[i].cost);
      ASSERT_EQ(describe(got[i].verdict), describe(want.verdict))
          << "burst " << burst << " call " << i;
      const double f = want.verdict.suppression_factor;
      in_band += f > 0 && f < 1 ? 1 : 0;
    }
    const int64_t step = static_cast<int64_t>(random() % 300'000);
    manual_clock(*memory).advance(step);
    manual_clock(*redis).advance(step);
  }
  EXPECT_GT(in_band, 0) << "no call was decided in the band";
}

// The overloads of the unit test, on both stores: every call decided alike
// (20x over its first 30 windows, 600,000 calls: 60 would take about a
// minute of Redis time).
class SuppressedSteadyLoad : public ::testing::TestWithParam<int64_t> {};

TEST_P(SuppressedSteadyLoad, RedisDecidesEveryCallAsTheMemoryStore) {
  const int64_t tenths = GetParam();
  Settings settings = limiter_settings("suppressed", "1000/s");
  settings.set("hard_limit_factor", "1.5");
  settings.set("seed", "7");
  const int64_t start = 1'700'000'000'000'000;
  BothStores both(settings);
  auto& [memory, redis, on_memory, on_redis] = both;
  const SteadyLoad load{1000, tenths, tenths >= 200 ? 30 : 60};
  const LoadRun m = run_steady_load(on_memory, manual_clock(*memory), start, load);
  const auto began = std::chrono::steady_clock::now();
  const LoadRun r = run_steady_load(on_redis, manual_clock(*redis), start, load);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  expect_decided_alike(m, r);
  EXPECT_EQ(r.accepted, m.accepted);
  std::printf(
      "load %4.1fx, %d windows: %zu calls decided alike on memory:// and Redis (%.1f s "
      "on Redis)\n",
      tenths / 10.0, load.windows, m.decisions.size(), seconds);
}

INSTANTIATE_TEST_SUITE_P(Loads, SuppressedSteadyLoad, ::testing::Values(12, 20, 50, 200),
                         [](const auto& info) { return "tenths_" + std::to_string(info.param); });

// The evenly spaced overloads of the unit test (each call at its own
// microsecond), over their first three windows, on both stores: every call
// decided alike.
struct EvenCase {
  const char* factor;
  int64_t tenths;
};

void PrintTo(const EvenCase& c, std::ostream* os) {
  *os << "hard_limit_factor=" << c.factor << " load=" << c.tenths / 10.0 << "x";
}

class SuppressedEvenLoad : public ::testing::TestWithParam<EvenCase> {};

TEST_P(SuppressedEvenLoad, RedisDecidesEveryCallAsTheMemoryStore) {
  const EvenCase c = GetParam();
  Settings settings = limiter_settings("suppressed", "1000/s");
  settings.set("hard_limit_factor", c.factor);
  settings.set("seed", "7");
  const int64_t start = 1'700'000'000'000'000;
  BothStores both(settings);
  auto& [memory, redis, on_memory, on_redis] = both;
  const EvenLoad load{1000 * c.tenths / 10, 3};
  const EvenRun m = run_even_load(on_memory, manual_clock(*memory), start, load);
  const EvenRun r = run_even_load(on_redis, manual_clock(*redis), start, load);
  expect_decided_alike(m, r);
  std::printf("hard_limit_factor=%s load %4.1fx evenly spaced: %zu calls decided alike\n", c.factor,
              c.tenths / 10.0, m.decisions.size());
}

INSTANTIATE_TEST_SUITE_P(Loads, SuppressedEvenLoad,
                         ::testing::Values(EvenCase{"1.5", 12}, EvenCase{"1.5", 20},
                                           EvenCase{"1.5", 50}, EvenCase{"1.5", 200},
                                           EvenCase{"2", 12}, EvenCase{"2", 20}, EvenCase{"2", 50},
                                           EvenCase{"2", 200}),
                         [](const auto& info) {
                           const EvenCase& c = info.param;
                           return std::string("h") + (c.factor[1] ? "1_5" : "2") + "_tenths_" +
                                  std::to_string(c.tenths);
                         });

}  // namespace
}  // namespace rl::test
