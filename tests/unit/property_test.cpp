// Randomized property tests: every algorithm, through the memory store with
// the manual clock, against its brute-force reference model over thousands
// of random (time advance, cost) sequences with random limits, windows,
// bursts and granularities. Each step's decision must equal the model's in
// every field, and the admitted history must respect the algorithm's bound.
//
// Deterministic: sequence i of an algorithm uses seed kBaseSeed + i; a
// failure prints it, and RL_TEST_SEED=<seed> reruns only that sequence.
// RL_TEST_SCALE (default 1, e.g. 0.2 under sanitizers) scales the count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>
#include <utility>

#include "clock.h"
#include "limiter.h"
#include "reference_model.h"

namespace {

using rl_test::Admitted;
using rl_test::ModelDecision;
using rl_test::ModelKind;
using rl_test::ModelRate;
using rl_test::ReferenceModel;

constexpr uint64_t kBaseSeed = 20260000;
constexpr int kSequences = 2000;
constexpr int kSteps = 40;

int sequence_count() {
  const char* scale = std::getenv("RL_TEST_SCALE");
  const double factor = scale ? std::atof(scale) : 1.0;
  return std::max(20, static_cast<int>(kSequences * factor));
}

// "1500ms" style text for a window of `us` microseconds, in its largest unit.
std::string duration_text(int64_t us) {
  if (us % 86400000000 == 0) return std::to_string(us / 86400000000) + "d";
  if (us % 1000000 == 0) return std::to_string(us / 1000000) + "s";
  if (us % 1000 == 0) return std::to_string(us / 1000) + "ms";
  return std::to_string(us) + "us";
}

struct Scenario {
  std::string algorithm;
  rl::Settings settings;
  ModelRate rate;
  std::string description;
};

using rl::kMaxLimit;
using rl::kMaxTime;  // the manual clock's end
constexpr int64_t kDay = int64_t{86400} * 1000000;
constexpr std::pair<int64_t, int64_t> kLargeLimits[] = {
    {100001, kDay},
    {86399, kDay},
    {99999, kDay},
    {kMaxLimit, 1000000},
    {kMaxLimit, 366 * kDay},
    {1, 366 * kDay},
    {7, 3},
    {kMaxLimit - 1, 366 * kDay},
    {kMaxLimit, 1},
    {999983, 7 * kDay},
    {1000003, 366 * kDay},
    {3, 366 * kDay},
};

Scenario random_scenario(const std::string& algorithm, std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  static const int64_t kWindows[] = {1,    2,      3,       7,        10,      100,
                                     1000, 250000, 1000000, 10000000, 60000000};
  static const int64_t kLimits[] = {1, 2, 3, 5, 7, 10, 60, 100, 1000};
  Scenario s;
  s.algorithm = algorithm;
  ModelRate& r = s.rate;
  if (pick(0, 3) == 0) {
    // Limits at the edges of the documented ranges, whose exact arithmetic
    // needs more than 2^53 (burst * window / gcd(limit, window)).
    const auto& [limit, window_us] = kLargeLimits[pick(0, std::size(kLargeLimits) - 1)];
    r.limit = limit;
    r.window_us = window_us;
  } else {
    r.window_us = pick(0, 3) == 0 ? pick(1, 2000000) : kWindows[pick(0, std::size(kWindows) - 1)];
    r.limit = pick(0, 3) == 0 ? pick(1, 50) : kLimits[pick(0, std::size(kLimits) - 1)];
  }
  r.burst = r.limit;
  s.settings.set("algorithm", algorithm);
  s.settings.set("limit", std::to_string(r.limit) + "/" + duration_text(r.window_us));
  s.description = algorithm + " " + std::to_string(r.limit) + "/" + duration_text(r.window_us);
  const bool bucket = algorithm == "gcra" || algorithm == "token_bucket";
  if (bucket && pick(0, 1) == 0) {
    // Up to 3 * limit + 2, within 2^40 and the 2^52 us a burst may take to come back.
    const int64_t largest = static_cast<int64_t>(
        std::min<rl_test::i128>({rl_test::i128(3) * r.limit + 2, kMaxLimit,
                                 rl_test::i128(kMaxTime) * r.limit / r.window_us}));
    r.burst = pick(0, 3) == 0 ? largest : pick(1, largest);
    s.settings.set("burst", std::to_string(r.burst));
    s.description += " burst " + std::to_string(r.burst);
  }
  if (algorithm == "sliding_window") {
    r.granularity_us = r.window_us;
    const int64_t parts = std::vector<int64_t>{1, 2, 3, 4, 5, 10, 100}[pick(0, 6)];
    if (r.window_us % parts == 0) r.granularity_us = r.window_us / parts;
    if (pick(0, 2) != 0) {
      s.settings.set("granularity", std::to_string(r.granularity_us) + "us");
      s.description += " granularity " + std::to_string(r.granularity_us) + "us";
    } else {
      r.granularity_us = r.window_us;
    }
  }
  return s;
}

// Time steps that hit the interesting instants: the same microsecond, one
// more, around one emission interval (window/limit), around one window.
int64_t random_advance(const ModelRate& r, std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t emission = std::max<int64_t>(1, r.window_us / r.limit);
  switch (pick(0, 9)) {
    case 0:
    case 1: return 0;
    case 2: return pick(1, 3);
    case 3:
    case 4: return pick(0, 2 * emission + 1);
    case 5: return pick(0, r.window_us);
    case 6: return std::max<int64_t>(0, r.window_us + pick(-1, 1));
    case 7: return pick(0, 3 * r.window_us);
    case 8: return emission + pick(-1, 1) > 0 ? emission + pick(-1, 1) : 1;
    default: return pick(0, 10 * r.window_us);
  }
}

ModelKind kind_of(const std::string& algorithm) {
  if (algorithm == "sliding_log") return ModelKind::sliding_log;
  if (algorithm == "sliding_window") return ModelKind::sliding_window;
  if (algorithm == "fixed_window") return ModelKind::fixed_window;
  return ModelKind::bucket;  // gcra and token_bucket: the exact continuous bucket
}

std::string show(const ModelDecision& d) {
  std::ostringstream o;
  o << "{allowed " << d.allowed << ", limit " << d.limit << ", remaining " << d.remaining
    << ", retry_after " << d.retry_after_us << ", reset_after " << d.reset_after_us << "}";
  return o.str();
}

ModelDecision from_verdict(const rl::Verdict& v) {
  return {v.allowed, v.limit, v.remaining, v.retry_after_us, v.reset_after_us};
}

bool same(const ModelDecision& a, const ModelDecision& b) {
  return a.allowed == b.allowed && a.limit == b.limit && a.remaining == b.remaining &&
         a.retry_after_us == b.retry_after_us && a.reset_after_us == b.reset_after_us;
}

// The bound each algorithm promises over the history it admitted; empty
// when it holds, else what broke.
std::string broken_bound(const std::string& algorithm, const ModelRate& r,
                         const std::vector<Admitted>& h) {
  using i128 = rl_test::i128;
  const ModelKind kind = kind_of(algorithm);
  for (size_t i = 0; i < h.size(); ++i) {
    int64_t sum = 0;
    for (size_t j = i; j < h.size(); ++j) {
      sum += h[j].cost;
      const int64_t span = h[j].at - h[i].at;
      bool ok = true;
      if (kind == ModelKind::bucket) {
        // At most burst + span * limit / window in any interval of length span.
        ok = i128(sum - r.burst) * r.window_us <= i128(span) * r.limit;
      } else if (kind == ModelKind::sliding_log) {
        // At most limit in any interval shorter than the window.
        ok = span >= r.window_us || sum <= r.limit;
      } else if (kind == ModelKind::fixed_window) {
        // At most limit per aligned window.
        ok = h[i].at / r.window_us != h[j].at / r.window_us || sum <= r.limit;
      } else {
        // At most limit in any window/granularity consecutive sub-windows.
        const int64_t g = r.granularity_us;
        ok = h[j].at / g - h[i].at / g >= r.window_us / g || sum <= r.limit;
      }
      if (!ok) {
        return "admitted " + std::to_string(sum) + " between " + std::to_string(h[i].at) + " and " +
               std::to_string(h[j].at);
      }
    }
  }
  return "";
}

// Runs sequence `seed`; on the first difference, fails naming the seed.
void run_sequence(const std::string& algorithm, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Scenario s = random_scenario(algorithm, rng);
  auto store = rl::open_store("memory://?clock=manual", {});
  auto& clock = dynamic_cast<rl::ManualClock&>(store->clock());
  const int64_t start = pick(0, 1) ? 0 : pick(0, int64_t{1} << 40);
  clock.set(start);
  rl::Limiter limiter(store, s.settings);
  ReferenceModel model(kind_of(algorithm), s.rate);
  std::vector<Admitted> admitted;
  std::ostringstream trail;
  for (int step = 0; step < kSteps; ++step) {
    clock.advance(std::min(random_advance(s.rate, rng), kMaxTime - clock.now_us()));
    const int64_t now = clock.now_us();
    const int64_t cap = model.capacity();
    const bool is_peek = pick(0, 6) == 0;
    int64_t cost = 1;
    switch (pick(0, 7)) {
      case 0:
      case 1: cost = pick(1, cap); break;
      case 2: cost = std::min(cap + pick(0, 1), kMaxLimit); break;
      default: break;
    }
    if (is_peek && pick(0, 3) == 0) cost = 0;
    const rl::Outcome o = limiter.run(is_peek ? rl::Op::peek : rl::Op::acquire, "key", cost);
    ASSERT_EQ(o.code, rl::Code::ok) << o.message;
    const ModelDecision got = from_verdict(o.verdict);
    const ModelDecision want = model.decide(now, cost, !is_peek);
    trail << "  t=" << now - start << (is_peek ? " peek " : " acquire ") << cost << " -> "
          << show(got) << "\n";
    if (!same(got, want)) {
      FAIL() << "seed " << seed << ": " << s.description << ", clock starts at " << start << "\n"
             << trail.str() << "  model expected " << show(want);
    }
    if (got.allowed && !is_peek) admitted.push_back({now, cost});
  }
  const std::string broken = broken_bound(algorithm, s.rate, admitted);
  ASSERT_TRUE(broken.empty()) << "seed " << seed << ": " << s.description << ": " << broken << "\n"
                              << trail.str();
}

const char* const kAlgorithms[] = {"gcra", "token_bucket", "sliding_log", "sliding_window",
                                   "fixed_window"};

class PropertyTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PropertyTest, DecisionsEqualTheReferenceModelAndRespectTheBound) {
  const std::string algorithm = GetParam();
  if (const char* only = std::getenv("RL_TEST_SEED")) {
    run_sequence(algorithm, std::strtoull(only, nullptr, 10));
    return;
  }
  // Each algorithm gets its own seeds so that their failures are told apart.
  const auto index = std::find(std::begin(kAlgorithms), std::end(kAlgorithms), algorithm) -
                     std::begin(kAlgorithms);
  const uint64_t base = kBaseSeed + 100000 * index;
  for (int i = 0; i < sequence_count() && !HasFailure(); ++i) run_sequence(algorithm, base + i);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, PropertyTest, ::testing::ValuesIn(kAlgorithms),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
