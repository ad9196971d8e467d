// Connection handshake: AUTH with a password or an ACL user, SELECT of the
// URL's database, and clear errors (never a hang) for wrong credentials.
#include <chrono>

#include "redis_env.h"

namespace rl::test {
namespace {

using Ms = std::chrono::milliseconds;

Outcome one_acquire(const std::string& url) {
  auto store = open_store(url, {});
  Limiter limiter(store, limiter_settings("gcra", "5/s"));
  return limiter.run(Op::acquire, "k", 1);
}

// "redis://user:pw@host:port" with the credentials replaced.
std::string with_credentials(const std::string& url, const std::string& credentials) {
  return "redis://" + credentials + (credentials.empty() ? "" : "@") +
         url.substr(url.find('@') + 1);
}

void expect_auth_error(const std::string& url, const std::string& needle) {
  const auto start = std::chrono::steady_clock::now();
  try {
    one_acquire(url + "?connect_timeout_ms=2000");
    ADD_FAILURE() << "opening " << url << " succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::auth) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, Ms(1000))
      << "a wrong password took until the timeout";
}

TEST(Auth, PasswordServerAdmitsWithThePassword) {
  const Outcome o = one_acquire(env_or_fail("RL_TEST_REDIS_PASSWORD_URL"));
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_TRUE(o.verdict.allowed);
}

TEST(Auth, AclUserAdmitsWithUserAndPassword) {
  const Outcome o = one_acquire(env_or_fail("RL_TEST_REDIS_ACL_URL"));
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_TRUE(o.verdict.allowed);
}

TEST(Auth, WrongPasswordIsAClearAuthError) {
  expect_auth_error(
      with_credentials(env_or_fail("RL_TEST_REDIS_PASSWORD_URL"), ":not-the-password"),
      "authentication failed");
}

TEST(Auth, WrongAclPasswordIsAClearAuthError) {
  expect_auth_error(with_credentials(env_or_fail("RL_TEST_REDIS_ACL_URL"), "rl-test:wrong"),
                    "WRONGPASS");
}

TEST(Auth, MissingPasswordIsAClearAuthError) {
  expect_auth_error(with_credentials(env_or_fail("RL_TEST_REDIS_PASSWORD_URL"), ""), "NOAUTH");
}

TEST(Handshake, SelectsTheDatabaseOfTheUrl) {
  const std::string prefix = unique_prefix();
  auto store = open_store(env_or_fail("RL_TEST_REDIS_URL") + "/3?prefix=" + prefix, {});
  Limiter limiter(store, limiter_settings("gcra", "5/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  EXPECT_NE(redis_cli("-n 3 --scan --pattern '" + prefix + ":*'"), "");
  EXPECT_EQ(redis_cli("-n 0 --scan --pattern '" + prefix + ":*'"), "");
}

TEST(Handshake, ADatabaseOutOfRangeFailsTheOpen) {
  try {
    open_store(env_or_fail("RL_TEST_REDIS_URL") + "/999", {});
    FAIL() << "SELECT 999 succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::backend_error) << e.what();
    EXPECT_NE(std::string(e.what()).find("SELECT 999"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rl::test
