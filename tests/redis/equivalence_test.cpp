// The Lua scripts equal the C++ core: the same random sequences of
// (advance, operation, key, cost) on memory:// and redis:// give identical
// decisions, for every algorithm, with one limit and with several.
#include <algorithm>
#include <limits>
#include <random>

#include "clock.h"
#include "config/policy.h"
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
    // Limits whose exact arithmetic passes 2^53 (burst * window_reduced up
    // to 2^85): the scripts' muldiv and pairs against core/'s __int128.
    {"gcra", "100001/1d", nullptr, nullptr},
    {"gcra", "1099511627776/366d", nullptr, nullptr},
    {"gcra", "1099511627776/s", nullptr, nullptr},
    {"gcra", "86399/1d, 7/3us, 1/366d", "86399, 20, 142", nullptr},
    {"token_bucket", "100001/1d", nullptr, nullptr},
    {"token_bucket", "1099511627776/366d", nullptr, nullptr},
    {"token_bucket", "1099511627776/s", "1099511627775", nullptr},
    {"token_bucket", "86399/1d, 7/3us, 1/366d", "1000, 20, 142", nullptr},
    {"sliding_log", "100001/1d", nullptr, nullptr},
    {"sliding_log", "1099511627776/s", nullptr, nullptr},
    {"sliding_log", "7/3us, 1000/s, 1099511627776/366d", nullptr, nullptr},
    {"sliding_window", "1099511627776/366d", nullptr, "1d"},
    {"sliding_window", "100001/1d, 1099511627776/s", nullptr, nullptr},
    {"fixed_window", "1099511627776/s, 86399/1d", nullptr, nullptr},
};

// Random costs and clock steps. For small limits (the first configs):
// costs 1 to 6 and steps up to 12 s. For larger ones, scaled to the limits:
// costs from 1 to the smallest capacity, steps from 0 us past two windows.
class Steps {
 public:
  Steps(const Policy& policy, uint64_t seed) : random_(seed) {
    capacity_ = kMaxLimit;
    for (const Rate& r : policy.rates) {
      capacity_ = std::min(capacity_, r.burst);
      window_ = std::max(window_, r.window_us);
      emission_ = std::min(emission_, std::max<int64_t>(1, r.window_us / r.limit));
    }
    small_ = capacity_ <= 25 && window_ <= 10'000'000;
  }
  uint64_t next() { return random_(); }
  int64_t below(int64_t n) { return static_cast<int64_t>(random_() % static_cast<uint64_t>(n)); }
  int64_t advance() {
    if (small_) return random_() % 8 == 0 ? below(12'000'000) : below(400'000);
    switch (below(5)) {
      case 0: return below(4);
      case 1: return below(2 * emission_ + 1);
      case 2: return below(window_ / 4 + 1);
      case 3: return emission_;
      default: return below(2 * window_ + 1);
    }
  }
  int64_t cost() {
    if (small_ || below(2) == 0) return 1 + below(6);
    return below(3) == 0 ? capacity_ : 1 + below(capacity_);
  }
  // More than the capacity: a "never" decision.
  int64_t too_much() const { return small_ ? 1'000'000 : std::min(capacity_ + 1, kMaxLimit); }

 private:
  std::mt19937_64 random_;
  int64_t capacity_ = 0;
  int64_t window_ = 0;
  int64_t emission_ = std::numeric_limits<int64_t>::max();
  bool small_ = true;
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

  Steps steps(Policy::from(settings), std::hash<std::string>{}(std::string(c.algorithm) + c.limit));
  for (int step = 0; step < 400; ++step) {
    const int pick = static_cast<int>(steps.next() % 100);
    if (pick < 25) {
      const int64_t advance = std::min(steps.advance(), kMaxTime - manual_clock(*memory).now_us());
      manual_clock(*memory).advance(advance);
      manual_clock(*redis).advance(advance);
      continue;
    }
    const Op op = pick < 70   ? Op::acquire
                  : pick < 85 ? Op::peek
                  : pick < 97 ? Op::refund
                              : Op::reset;
    const std::string key = std::string("k") + std::to_string(steps.next() % 3);
    int64_t cost = op == Op::reset ? 0 : steps.cost();
    if (op == Op::acquire && steps.next() % 20 == 0) cost = steps.too_much();
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
