// rl under the least-privilege ACL user of docs/redis.md (the server of
// scripts/with-redis with RL_TEST_REDIS_LEAST_URL): every algorithm and
// operation works with only `~rl:*` and the commands rl and its scripts
// run; a key outside the pattern is a clear auth error (NOPERM).
#include "redis_env.h"

namespace rl::test {
namespace {

TEST(LeastPrivilege, EveryAlgorithmAndOperationRunsUnderTheDocumentedRule) {
  // The default prefix, rl: the rule's key pattern is ~rl:*.
  auto store = open_store(env_or_fail("RL_TEST_REDIS_LEAST_URL"), {});
  const std::string name = unique_prefix();  // a limiter name no other run uses
  for (const char* algorithm : kAlgorithms) {
    Limiter limiter(store, limiter_settings(algorithm, "5/s", name));
    // The first call finds no script (NOSCRIPT) and loads it with EVAL.
    for (Op op : {Op::acquire, Op::peek, Op::refund, Op::reset}) {
      const Outcome o = limiter.run(op, "k", op == Op::peek ? 0 : 1);
      EXPECT_EQ(o.code, Code::ok) << algorithm << ": " << o.message;
    }
  }
}

TEST(LeastPrivilege, AKeyOutsideThePatternIsAClearAuthError) {
  auto store = open_store(env_or_fail("RL_TEST_REDIS_LEAST_URL") + "?prefix=other", {});
  Limiter limiter(store, limiter_settings("gcra", "5/s"));
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::auth) << o.message;
  EXPECT_NE(o.message.find("NOPERM"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("redis 127.0.0.1:"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace rl::test
