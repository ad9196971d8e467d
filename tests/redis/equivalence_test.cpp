// The Lua scripts equal the C++ core: the same random sequences of
// (advance, operation, key, cost) on memory:// and redis:// give identical
// decisions, for every algorithm, with one limit and with several.
#include <random>

#include "redis_env.h"

namespace rl::test {
namespace {

struct Config {
  const char* algorithm;
  const char* limit;
  const char* burst;        // or nullptr
  const char* granularity;  // or nullptr
};

// How gtest (and ctest's test list) shows a Config.
void PrintTo(const Config& c, std::ostream* os) {
  *os << c.algorithm << " limit=" << c.limit << (c.burst ? " burst=" : "")
      << (c.burst ? c.burst : "") << (c.granularity ? " granularity=" : "")
      << (c.granularity ? c.granularity : "");
}

const Config kConfigs[] = {
    {"gcra", "3/s", nullptr, nullptr},
    {"gcra", "10/s, 25/5s", "4, 25", nullptr},
    {"token_bucket", "7/3s", nullptr, nullptr},
    {"token_bucket", "5/s, 12/10s", "8, 12", nullptr},
    {"sliding_log", "5/s", nullptr, nullptr},
    {"sliding_log", "4/s, 9/4s", nullptr, nullptr},
    {"sliding_window", "6/s", nullptr, nullptr},
    {"sliding_window", "10/2s, 30/10s", nullptr, "500ms"},
    {"fixed_window", "4/s", nullptr, nullptr},
    {"fixed_window", "3/s, 10/5s", nullptr, nullptr},
};

std::string describe(const Verdict& v) {
  return "{allowed " + std::to_string(v.allowed) + ", limit " + std::to_string(v.limit) +
         ", remaining " + std::to_string(v.remaining) + ", retry " +
         std::to_string(v.retry_after_us) + ", reset " + std::to_string(v.reset_after_us) + "}";
}

class Equivalence : public ::testing::TestWithParam<Config> {};

TEST_P(Equivalence, RandomSequencesDecideAsTheMemoryStore) {
  const Config& c = GetParam();
  Settings settings = limiter_settings(c.algorithm, c.limit);
  if (c.burst) settings.set("burst", c.burst);
  if (c.granularity) settings.set("granularity", c.granularity);
  auto memory = open_store("memory://?clock=manual", {});
  auto redis = open_redis("clock=manual");
  Limiter on_memory(memory, settings);
  Limiter on_redis(redis, settings);
  const int64_t start = 1'700'000'000'000'000;  // a TIME-like value, near 2^50.6
  manual_clock(*memory).set(start);
  manual_clock(*redis).set(start);

  std::mt19937_64 random(std::hash<std::string>{}(std::string(c.algorithm) + c.limit));
  const int64_t max_cost = 6;
  for (int step = 0; step < 400; ++step) {
    const int pick = static_cast<int>(random() % 100);
    if (pick < 25) {
      // Mostly small steps, sometimes past whole windows.
      const int64_t advance = random() % 8 == 0 ? static_cast<int64_t>(random() % 12'000'000)
                                                : static_cast<int64_t>(random() % 400'000);
      manual_clock(*memory).advance(advance);
      manual_clock(*redis).advance(advance);
      continue;
    }
    const Op op = pick < 70   ? Op::acquire
                  : pick < 85 ? Op::peek
                  : pick < 97 ? Op::refund
                              : Op::reset;
    const std::string key = std::string("k") + std::to_string(random() % 3);
    int64_t cost = op == Op::reset ? 0 : 1 + static_cast<int64_t>(random() % max_cost);
    if (op == Op::acquire && random() % 20 == 0) cost = 1'000'000;  // more than any burst: never
    const Outcome m = on_memory.run(op, key, cost);
    const Outcome r = on_redis.run(op, key, cost);
    ASSERT_EQ(r.code, Code::ok) << r.message;
    ASSERT_EQ(describe(r.verdict), describe(m.verdict))
        << "step " << step << ": op " << static_cast<int>(op) << " key " << key << " cost " << cost;
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, Equivalence, ::testing::ValuesIn(kConfigs),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return std::string(info.param.algorithm) + "_" +
                                  std::to_string(info.index);
                         });

// acquire_batch: all requests in one pipelined write, decided in order.
TEST(Batch, DecidesEachRequestInOrder) {
  auto memory = open_store("memory://?clock=manual", {});
  auto redis = open_redis("clock=manual");
  const Settings settings = limiter_settings("sliding_log", "3/s");
  Limiter on_memory(memory, settings);
  Limiter on_redis(redis, settings);
  std::vector<Call> calls;
  for (int i = 0; i < 12; ++i)
    calls.push_back(Call{Op::acquire, "k" + std::to_string(i % 2), 1 + i % 2});
  const std::vector<Outcome> m = on_memory.acquire_batch(calls);
  const std::vector<Outcome> r = on_redis.acquire_batch(calls);
  ASSERT_EQ(r.size(), m.size());
  for (size_t i = 0; i < r.size(); ++i) {
    ASSERT_EQ(r[i].code, Code::ok) << r[i].message;
    EXPECT_EQ(describe(r[i].verdict), describe(m[i].verdict)) << "request " << i;
  }
}

}  // namespace
}  // namespace rl::test
