// Key schema: hostile user keys stay apart, keys carry a TTL no longer than
// their state needs, and idle keys are gone once it passes.
#include <thread>

#include "redis/key_schema.h"
#include "redis_env.h"

namespace rl::test {
namespace {

TEST(KeySchema, EscapesEverythingThatCouldMoveOrMergeAKey) {
  EXPECT_EQ(redis::escape_key("alice"), "alice");
  EXPECT_EQ(redis::escape_key("a{b}c"), "a%7Bb%7Dc");
  EXPECT_EQ(redis::escape_key("100%"), "100%25");
  EXPECT_EQ(redis::escape_key(std::string("\0\xff \n", 4)), "%00%FF%20%0A");
  EXPECT_EQ(redis::escape_key("a:b"), "a:b");  // inside the braces a colon is plain data
  // Escaping is one-to-one: a key that spells an escape differs from the byte.
  EXPECT_NE(redis::escape_key("%7D"), redis::escape_key("}"));
}

TEST(KeySchema, DifferentlyConfiguredLimitersNeverShareAKey) {
  Policy a = Policy::from(limiter_settings("gcra", "10/s", "api"));
  Policy b = Policy::from(limiter_settings("gcra", "10/m", "api"));
  Policy c = Policy::from(limiter_settings("token_bucket", "10/s", "api"));
  Settings burst = limiter_settings("gcra", "10/s", "api");
  burst.set("burst", "20");
  Policy d = Policy::from(burst);
  const std::string key = redis::key_shape("rl", a).key_for("u");
  EXPECT_EQ(key, "rl:api:{u}:v3:gcra:10/1000000");
  for (const Policy& other : {b, c, d}) EXPECT_NE(redis::key_shape("rl", other).key_for("u"), key);
}

TEST(KeySchema, SlidingLogsListIsVersion2) {
  Policy log = Policy::from(limiter_settings("sliding_log", "10/s", "api"));
  EXPECT_EQ(redis::key_shape("rl", log).key_for("u"), "rl:api:{u}:v2:sliding_log:10/1000000");
}

TEST(HostileKeys, AreStoredApartAndNeverReachAnotherKeysState) {
  auto store = open_redis("clock=manual");
  Limiter limiter(store, limiter_settings("fixed_window", "1/h"));
  Limiter other(store, limiter_settings("fixed_window", "1/h", "other"));
  const std::vector<std::string> keys = {
      "plain",
      "{plain}",
      "}plain{",
      "a:b",
      "a}:v3:fixed_window:1/3600000000",
      "%7B",
      "{",
      "}",
      std::string("\0", 1),
      std::string("\0\0", 2),
      std::string("\xff\xfe{}\r\n", 6),
      std::string(kMaxKeyLength, 'x'),
      std::string(kMaxKeyLength - 1, 'x') + "}",
  };
  // Each key admits exactly once: no two of them share state.
  for (const std::string& k : keys) {
    const Outcome o = limiter.run(Op::acquire, k, 1);
    ASSERT_EQ(o.code, Code::ok) << o.message;
    EXPECT_TRUE(o.verdict.allowed)
        << "key of " << k.size() << " bytes shares state with an earlier key";
  }
  for (const std::string& k : keys) {
    EXPECT_FALSE(limiter.run(Op::acquire, k, 1).verdict.allowed);
    EXPECT_TRUE(other.run(Op::peek, k, 1).verdict.allowed)
        << "another limiter sees this key's state";
  }
}

TEST(HostileKeys, OneBytePastTheMaximumIsInvalid) {
  auto store = open_redis();
  Limiter limiter(store, limiter_settings("gcra", "1/s"));
  try {
    limiter.run(Op::acquire, std::string(kMaxKeyLength + 1, 'x'), 1);
    FAIL() << "a key of 513 bytes was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_arg);
    EXPECT_NE(std::string(e.what()).find("key"), std::string::npos) << e.what();
  }
}

// PTTL of every key under `prefix`, found with SCAN.
std::vector<int64_t> ttls_under(const std::string& prefix) {
  std::vector<int64_t> ttls;
  std::string keys = redis_cli("--scan --pattern '" + prefix + ":*'");
  size_t at = 0;
  while (at < keys.size()) {
    size_t end = keys.find('\n', at);
    const std::string key = keys.substr(at, end - at);
    at = end == std::string::npos ? keys.size() : end + 1;
    if (!key.empty()) ttls.push_back(std::stoll(redis_cli("pttl '" + key + "'")));
  }
  return ttls;
}

// Waits until at least `room_us` remain before Redis's clock crosses the
// next multiple of `window_us`.
void wait_for_window_start(int64_t window_us, int64_t room_us) {
  const std::string time = redis_cli("time");  // "<seconds>\n<microseconds>\n"
  const size_t newline = time.find('\n');
  const int64_t now =
      std::stoll(time.substr(0, newline)) * 1000000 + std::stoll(time.substr(newline + 1));
  const int64_t left = window_us - now % window_us;
  if (left < room_us) std::this_thread::sleep_for(std::chrono::microseconds(left + 1000));
}

TEST(IdleKeys, CarryATtlOfTheirStateAndAreGoneAfterIt) {
  const std::string prefix = unique_prefix();
  auto store = open_store(redis_url("", prefix), {});
  // Short windows: state lives at most 2 s (sliding_window: until its
  // newest counter leaves the window, under 4 s). Long enough that a loaded
  // machine's redis-cli calls read every TTL before it runs out.
  for (const char* algorithm : kAlgorithms) {
    Limiter limiter(store, limiter_settings(algorithm, "5/2s", algorithm));
    // fixed_window's state ends with its aligned window, which may be about
    // to close (then the keys could expire before the scan below): start
    // early in a window of Redis's clock.
    if (std::string(algorithm) == "fixed_window") wait_for_window_start(2000000, 1500000);
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(limiter.run(Op::acquire, "k" + std::to_string(i), 2).code, Code::ok);
    // At once: fixed_window's state may end with its aligned window.
    const std::vector<int64_t> ttls = ttls_under(prefix + ":" + algorithm);
    ASSERT_EQ(ttls.size(), 3u) << algorithm;
    const int64_t longest = std::string(algorithm) == "sliding_window" ? 4001 : 2001;
    for (int64_t ttl : ttls) {
      EXPECT_GT(ttl, 0) << algorithm << ": a key without a TTL";
      EXPECT_LE(ttl, longest) << algorithm << ": a TTL longer than the state needs";
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(4020));  // Redis expiry in real time
  EXPECT_TRUE(ttls_under(prefix).empty()) << "idle keys remain after their TTL";
}

TEST(IdleKeys, ResetAndFullRefundDeleteTheKey) {
  const std::string prefix = unique_prefix();
  auto store = open_store(redis_url("", prefix), {});
  Limiter limiter(store, limiter_settings("sliding_log", "5/h"));
  limiter.run(Op::acquire, "a", 2);
  limiter.run(Op::acquire, "b", 2);
  EXPECT_EQ(ttls_under(prefix).size(), 2u);
  limiter.run(Op::reset, "a", 0);
  limiter.run(Op::refund, "b", 2);
  EXPECT_TRUE(ttls_under(prefix).empty());
}

}  // namespace
}  // namespace rl::test
