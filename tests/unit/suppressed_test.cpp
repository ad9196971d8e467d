// algorithm=suppressed on memory://: under a steady overload the accepted
// rate settles at the soft limit, spread evenly over the window, and never
// passes the hard limit in any window; the draws are a pure function of the
// seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "algorithms/draw_source.h"
#include "store.h"
#include "suppressed_load.h"

namespace rl::test {
namespace {

ManualClock& manual_clock(Store& store) {
  return dynamic_cast<ManualClock&>(store.clock());
}

constexpr int64_t kStart = 1'700'000'000'000'000;
// The first windows fill the sliding window; from the third on the factor
// has settled.
constexpr int kSettled = 2;

// A hard limit factor and a granularity (nullptr: the default, 100 ms here).
struct Shape {
  const char* factor;
  const char* granularity;
};

void PrintTo(const Shape& c, std::ostream* os) {
  *os << "hard_limit_factor=" << c.factor
      << " granularity=" << (c.granularity ? c.granularity : "default");
}

Settings suppressed_settings(const std::string& limit, const Shape& shape) {
  Settings s;
  s.set("algorithm", "suppressed");
  s.set("limit", limit);
  s.set("hard_limit_factor", shape.factor);
  if (shape.granularity) s.set("granularity", shape.granularity);
  s.set("seed", "7");
  return s;
}

struct Figures {
  int64_t min = INT64_MAX, max = 0, peak = 0;  // min, max settled; peak over every window
  double mean = 0;
};

Figures figures_of(const LoadRun& run) {
  Figures f;
  int64_t sum = 0;
  for (size_t w = 0; w < run.accepted.size(); ++w) {
    f.peak = std::max(f.peak, run.accepted[w]);
    if (w < kSettled) continue;
    f.min = std::min(f.min, run.accepted[w]);
    f.max = std::max(f.max, run.accepted[w]);
    sum += run.accepted[w];
  }
  f.mean = static_cast<double>(sum) / static_cast<double>(run.accepted.size() - kSettled);
  return f;
}

class SteadyOverload : public ::testing::TestWithParam<Shape> {};

TEST_P(SteadyOverload, AcceptedRateSettlesAtTheSoftLimitAndNeverPassesTheHardLimit) {
  const Shape shape = GetParam();
  const std::string factor = shape.factor;
  const std::string granularity = shape.granularity ? shape.granularity : "100ms";
  for (int64_t tenths : {12, 20, 50, 200}) {
    auto store = open_store("memory://?clock=manual", {});
    Limiter limiter(store, suppressed_settings("1000/s", shape));
    const int64_t hard = limiter.policy().rates[0].burst;
    const LoadRun run = run_steady_load(limiter, manual_clock(*store), kStart, {1000, tenths});
    const Figures f = figures_of(run);
    std::printf(
        "suppressed 1000/s hard_limit_factor=%s granularity=%s load %4.1fx: accepted per window, "
        "windows %d-60: min %lld max %lld mean %.1f (%+.2f%% .. %+.2f%% of 1000); any window: max "
        "%lld, hard %lld\n",
        factor.c_str(), granularity.c_str(), tenths / 10.0, kSettled + 1,
        static_cast<long long>(f.min), static_cast<long long>(f.max), f.mean, (f.min - 1000) / 10.0,
        (f.max - 1000) / 10.0, static_cast<long long>(f.peak), static_cast<long long>(hard));
    EXPECT_LE(f.peak, hard) << "load " << tenths / 10.0;
    EXPECT_GE(f.min, 950) << "load " << tenths / 10.0;
    EXPECT_LE(f.max, 1050) << "load " << tenths / 10.0;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SteadyOverload,
                         ::testing::Values(Shape{"1", nullptr}, Shape{"1.5", nullptr},
                                           Shape{"2", nullptr}, Shape{"1.5", "10ms"},
                                           Shape{"2", "10ms"}),
                         [](const auto& info) { return "shape_" + std::to_string(info.index); });

// The shape within the window: calls evenly spaced at their own
// microseconds, `1000/s`, default 100 ms sub-windows. After the first window
// every 100 ms admits a tenth of the limit within 20%, at every overload; no
// window passes the hard limit (one aligned to the sub-windows at all, one
// that is not by at most one sub-window's admissions).
struct Overload {
  const char* factor;
  int64_t tenths;  // offered: tenths / 10 times the limit
};

void PrintTo(const Overload& o, std::ostream* os) {
  *os << "hard_limit_factor=" << o.factor << " load=" << o.tenths / 10.0 << "x";
}

class EvenOverload : public ::testing::TestWithParam<Overload> {};

TEST_P(EvenOverload, EveryHundredMillisecondsAdmitsATenthOfTheLimit) {
  const Overload o = GetParam();
  constexpr int64_t kWindow = 1000000, kSub = 100000;
  constexpr int kSeconds = 10;
  auto store = open_store("memory://?clock=manual", {});
  Limiter limiter(store, suppressed_settings("1000/s", {o.factor, nullptr}));
  const int64_t hard = limiter.policy().rates[0].burst;
  const EvenRun run =
      run_even_load(limiter, manual_clock(*store), kStart, {1000 * o.tenths / 10, kSeconds});
  const std::vector<int64_t>& at = run.admitted_at;
  auto admitted_in = [&](int64_t from, int64_t to) {
    return std::lower_bound(at.begin(), at.end(), to) -
           std::lower_bound(at.begin(), at.end(), from);
  };
  int64_t low = INT64_MAX, high = 0, most_per_sub = 0;
  for (int64_t from = 0; from < kSeconds * kWindow; from += kSub) {
    const int64_t n = admitted_in(from, from + kSub);
    most_per_sub = std::max(most_per_sub, n);
    if (from < kWindow) continue;  // the first window fills the sliding window
    low = std::min(low, n);
    high = std::max(high, n);
  }
  int64_t aligned = 0, sliding = 0;
  for (int64_t end = kSub; end < (kSeconds + 1) * kWindow; end += kSub)
    aligned = std::max<int64_t>(aligned, admitted_in(end - kWindow, end));
  for (const int64_t from : at)
    sliding = std::max<int64_t>(sliding, admitted_in(from, from + kWindow));
  std::printf(
      "suppressed 1000/s hard_limit_factor=%s load %4.1fx, calls evenly spaced: admitted per 100 "
      "ms after the first window %lld to %lld; most in a window: aligned %lld, any %lld (hard "
      "%lld)\n",
      o.factor, o.tenths / 10.0, static_cast<long long>(low), static_cast<long long>(high),
      static_cast<long long>(aligned), static_cast<long long>(sliding),
      static_cast<long long>(hard));
  EXPECT_GE(low, 80);
  EXPECT_LE(high, 120);
  EXPECT_LE(aligned, hard);
  EXPECT_LE(sliding, hard + most_per_sub);
}

INSTANTIATE_TEST_SUITE_P(Loads, EvenOverload,
                         ::testing::Values(Overload{"1.5", 12}, Overload{"1.5", 20},
                                           Overload{"1.5", 50}, Overload{"1.5", 200},
                                           Overload{"2", 12}, Overload{"2", 20}, Overload{"2", 50},
                                           Overload{"2", 200}),
                         [](const auto& info) {
                           const Overload& o = info.param;
                           return std::string("h") + (o.factor[1] ? "1_5" : "2") + "_tenths_" +
                                  std::to_string(o.tenths);
                         });

// A peek of cost 0 in the band between the soft and the hard limit has its
// share already (the Lua code's answer); it once divided by its cost.
TEST(SuppressedPeek, ACostOfZeroUnderOverloadIsAdmittedNotADivisionByZero) {
  std::vector<Rate> rates(1);
  rates[0] = {.limit = 10,
              .window_us = 1000000,
              .burst = 30,
              .granularity_us = 100000,
              .limit_reduced = 10,
              .window_reduced = 1};
  const int64_t now = kStart;
  // 15 offered, none admitted yet, a cached base of one half: a deficit.
  std::vector<Suppressed::State> states(1);
  states[0].buckets.push_back({now / 100000, 15, 0});
  states[0].factor_until = now + 1000000;
  states[0].base = Suppressed::kScale / 2;
  bool changed = false;
  const Verdict v = Suppressed::apply(Op::peek, states, rates, now, 0, Chance{0, 0}, changed);
  EXPECT_TRUE(v.allowed);
}

TEST(DrawSource, TheSameSeedDrawsTheSameNumbersInRange) {
  DrawSource a(42, false), b(42, false), c(43, false);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const int64_t x = a.next();
    ASSERT_EQ(x, b.next());
    ASSERT_GE(x, 0);
    ASSERT_LT(x, Suppressed::kScale);
    differ += x != c.next() ? 1 : 0;
  }
  EXPECT_GT(differ, 990);
}

TEST(DrawSource, AManualClockWithoutSeedIsRepeatable) {
  DrawSource a(std::nullopt, true), b(0, false);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(a.next(), b.next());
}

}  // namespace
}  // namespace rl::test
