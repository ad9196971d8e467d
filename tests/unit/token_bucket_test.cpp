// token_bucket: on the struct, then through the memory store with the manual clock.
#include "algorithms/token_bucket.h"

#include "capi_helpers.h"
#include "core_helpers.h"

namespace {

using rl_test::OneKey;
using rl_test::rate_of;
using rl_test::verdict_is;

TEST(TokenBucket, StartsFullAtTheBurst) {
  OneKey<rl::TokenBucket> key(rate_of("10/s", 20));
  EXPECT_TRUE(verdict_is(key.acquire(0, 20), true, 10, 0, 0, 2000000));
  EXPECT_TRUE(verdict_is(key.acquire(0), false, 10, 0, 100000, 2000000));
}

TEST(TokenBucket, FractionalRefillIsExact) {
  // 7 per 10 s: one token every 1428571.43 us.
  OneKey<rl::TokenBucket> key(rate_of("7/10s"));
  EXPECT_TRUE(verdict_is(key.acquire(0, 7), true, 7, 0, 0, 10000000));
  EXPECT_TRUE(verdict_is(key.acquire(1428571), false, 7, 0, 1, 8571429));
  EXPECT_TRUE(verdict_is(key.acquire(1428572), true, 7, 0, 0, 10000000));
}

TEST(TokenBucket, TwoTo40PerSecondRefillsItsFractionOfAUnitPerMicrosecond) {
  // 1099511.627776 tokens per us; capacity 2^40 * 15625 = 2^54 scaled tokens.
  OneKey<rl::TokenBucket> key(rate_of("1099511627776/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0, int64_t{1} << 40), true, int64_t{1} << 40, 0, 0, 1000000));
  EXPECT_TRUE(verdict_is(key.acquire(1, 1099512), false, int64_t{1} << 40, 1099511, 1, 999999));
  EXPECT_TRUE(verdict_is(key.acquire(1, 1099511), true, int64_t{1} << 40, 0, 0, 1000000));
}

TEST(TokenBucket, DeniedRequestConsumesNothing) {
  OneKey<rl::TokenBucket> key(rate_of("4/s"));
  key.acquire(0, 3);
  EXPECT_TRUE(verdict_is(key.acquire(0, 2), false, 4, 1, 250000, 750000));
  EXPECT_TRUE(verdict_is(key.acquire(0, 1), true, 4, 0, 0, 1000000));
}

TEST(TokenBucket, CostAboveBurstIsNever) {
  OneKey<rl::TokenBucket> key(rate_of("4/s"));
  EXPECT_TRUE(verdict_is(key.acquire(0, 5), false, 4, 4, -1, 0));
}

TEST(TokenBucketStore, PeekRefundAndRefillThroughTheCApi) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"algorithm", "token_bucket"}, {"limit", "3/s"}});
  EXPECT_TRUE(rl_test::decision_is(rl_test::peek(lim.get(), "k", 3), {true, 3, 0, 0, 1000000}));
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k", 3), {true, 3, 0, 0, 1000000}));
  EXPECT_TRUE(
      rl_test::decision_is(rl_test::acquire(lim.get(), "k"), {false, 3, 0, 333334, 1000000}));
  const std::string key = "k";  // outlives the request that points into it
  const rl_request req = rl_test::request(key, 1);
  rl_decision after = rl_test::blank_decision();
  ASSERT_EQ(rl_limiter_refund(lim.get(), &req, &after, nullptr), RL_OK);
  EXPECT_TRUE(rl_test::decision_is(after, {true, 3, 1, 0, 666667}));
  rl_test::advance(store.get(), 666667);
  EXPECT_TRUE(rl_test::decision_is(rl_test::acquire(lim.get(), "k", 3), {true, 3, 0, 0, 1000000}));
}

}  // namespace
