// Under Redis's clock a key expires when its state is spent, rounded up to
// the millisecond: never before (a call in that gap would be decided on an
// empty key and admitted once too often), and at most 1 ms after. Each key's
// PEXPIRETIME is compared with the instant, to the microsecond, from which
// its stored state equals an empty one.
#include <algorithm>
#include <sstream>

#include "config/policy.h"
#include "redis_env.h"

namespace rl::test {
namespace {

std::vector<int64_t> numbers_of(const std::string& text) {
  std::vector<int64_t> nums;
  std::istringstream in(text);
  for (int64_t n; in >> n;) nums.push_back(n);
  return nums;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The instant (us) from which a stored value equals an empty state, read as
// docs/key-schema.md encodes each algorithm (every rate here is narrow).
int64_t idle_at(const std::string& algorithm, const std::vector<int64_t>& v,
                const std::vector<Rate>& rates) {
  int64_t idle = 0;
  size_t at = 0;
  for (const Rate& r : rates) {
    if (algorithm == "gcra") {  // tat frac, or tat alone (one limit, frac 0)
      idle = std::max(idle, v.at(at));
      at += 2;
    } else if (algorithm == "token_bucket") {  // level at
      const int64_t missing = r.burst * r.window_reduced - v.at(at);
      idle = std::max(idle, v.at(at + 1) + ceil_div(missing, r.limit_reduced));
      at += 2;
    } else if (algorithm == "fixed_window") {  // window count, or packed (one limit)
      const int64_t window = v.size() == 1 ? v.at(0) / (r.limit + 1) : v.at(at);
      idle = std::max(idle, (window + 1) * r.window_us);
      at += 2;
    } else if (algorithm == "sliding_window") {  // n, then index count n times
      const int64_t n = v.at(at);
      const int64_t newest = v.at(at + 1 + 2 * (n - 1));
      idle = std::max(idle, (newest + r.window_us / r.granularity_us + 1) * r.granularity_us);
      at += 1 + 2 * n;
    } else {  // sliding_log: the newest entry's instant, plus the longest window
      idle = std::max(idle, v.at(0) + r.window_us);
    }
  }
  return idle;
}

// "<key>\n<pexpiretime ms>\n<value>\n" for every key under `prefix`: a list's
// value is its newest entry's instant (struct '<i8' of its first 8 bytes).
std::string keys_with_expiry(const std::string& prefix) {
  const std::string script =
      "local out, cursor = {}, '0' "
      "repeat "
      "  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000) "
      "  cursor = r[1] "
      "  for _, k in ipairs(r[2]) do "
      "    local v "
      "    if redis.call('TYPE', k).ok == 'list' then "
      "      v = string.format('%d', (struct.unpack('<i8', redis.call('LINDEX', k, -1)))) "
      "    else v = redis.call('GET', k) end "
      "    out[#out + 1] = k; out[#out + 1] = redis.call('PEXPIRETIME', k); out[#out + 1] = v "
      "  end "
      "until cursor == '0' "
      "return out";
  return redis_cli("--raw eval \"" + script + "\" 0 '" + prefix + ":*'");
}

struct Case {
  const char* algorithm;
  const char* limits;
};

TEST(KeyExpiry, NeverBeforeTheStateIsSpentAndAtMostAMillisecondAfter) {
  // Odd rates, so that states end at every microsecond of a millisecond;
  // gcra and token_bucket also with two limits. Windows of minutes, so
  // that no key expires before the scan, however loaded the machine.
  const Case cases[] = {
      {"gcra", "7/300s"},         {"gcra", "7/300s,20/700s"},
      {"token_bucket", "7/300s"}, {"token_bucket", "7/300s,20/700s"},
      {"fixed_window", "7/300s"}, {"sliding_window", "7/300s"},
      {"sliding_log", "7/300s"},
  };
  constexpr int kKeys = 150;
  for (const Case& c : cases) {
    const std::string prefix = unique_prefix();
    auto store = open_store(redis_url("", prefix), {});
    Settings settings = limiter_settings(c.algorithm, c.limits);
    const std::vector<Rate> rates = Policy::from(settings).rates;
    Limiter limiter(store, settings);
    for (int i = 0; i < kKeys; ++i) {
      const Outcome o = limiter.run(Op::acquire, "k" + std::to_string(i), 1 + i % 3);
      ASSERT_EQ(o.code, Code::ok) << o.message;
      ASSERT_TRUE(o.verdict.allowed);
    }
    std::istringstream lines(keys_with_expiry(prefix));
    int seen = 0, early = 0, late = 0;
    std::string key, expiry, value, first_wrong;
    while (std::getline(lines, key) && std::getline(lines, expiry) && std::getline(lines, value)) {
      ++seen;
      const int64_t expires_us = std::stoll(expiry) * 1000;
      const int64_t idle = idle_at(c.algorithm, numbers_of(value), rates);
      if (expires_us < idle) ++early;
      if (expires_us >= idle + 1000) ++late;
      if ((expires_us < idle || expires_us >= idle + 1000) && first_wrong.empty()) {
        first_wrong = key + ": expires at " + std::to_string(expires_us) + " us, state spent at " +
                      std::to_string(idle) + " us";
      }
    }
    EXPECT_EQ(seen, kKeys) << c.algorithm << " " << c.limits;
    EXPECT_EQ(early, 0) << c.algorithm << " " << c.limits << ": keys expiring early, e.g. "
                        << first_wrong;
    EXPECT_EQ(late, 0) << c.algorithm << " " << c.limits << ": keys expiring over 1 ms late, e.g. "
                       << first_wrong;
  }
}

// Under the manual clock, to the microsecond: one microsecond before a
// key's state is spent it still counts (remaining below burst), and at that
// instant it equals an empty key, on both stores.
TEST(KeyExpiry, AStateCountsUntilItsLastMicrosecondUnderTheManualClock) {
  for (const std::string& url :
       {std::string("memory://?clock=manual"), redis_url("clock=manual")}) {
    auto store = open_store(url, {});
    ManualClock& clock = manual_clock(*store);
    for (const char* algorithm : {"gcra", "token_bucket"}) {
      for (const char* limits : {"7/300s", "7/300s,20/700s"}) {
        Limiter limiter(store, limiter_settings(algorithm, limits, std::string(algorithm) + "x"));
        for (int64_t offset : {3, 999, 500}) {
          // A fresh millisecond past everything earlier, at `offset` into it.
          const int64_t start = (clock.now_us() / 1000 + 10000) * 1000 + offset;
          clock.set(start);
          const std::string key = std::string(limits) + std::to_string(offset);
          const Outcome first = limiter.run(Op::acquire, key, 1);
          ASSERT_TRUE(first.verdict.allowed);
          const int64_t spent = start + first.verdict.reset_after_us;
          clock.set(spent - 1);
          const Outcome before = limiter.run(Op::peek, key, 0);
          EXPECT_LT(before.verdict.remaining, 7) << url << " " << algorithm << " " << limits;
          clock.set(spent);
          const Outcome at = limiter.run(Op::peek, key, 0);
          EXPECT_EQ(at.verdict.remaining, 7) << url << " " << algorithm << " " << limits;
        }
      }
    }
  }
}

}  // namespace
}  // namespace rl::test
