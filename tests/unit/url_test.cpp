// Store URLs: credentials never reach a message, userinfo is split off before
// '/', '?' and '#', and malformed hosts are refused when the store opens.
#include "config/url.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error.h"
#include "rl/rl.h"

namespace {

// The message of parse_url's failure, or "" when it parsed.
std::string failure_of(const std::string& text) {
  try {
    rl::parse_url(text, 6379);
  } catch (const rl::Error& e) {
    EXPECT_EQ(e.code(), rl::Code::invalid_arg) << text;
    return e.what();
  }
  return "";
}

TEST(Url, PasswordsMayHoldAnyCharacter) {
  for (const std::string password : {"S3cr/3tPw", "a?b", "a#b", "a@b", "p:w", "a,b", "%zz-no"}) {
    // Unescaped where the grammar allows it, percent-escaped always.
    std::string escaped;
    for (char c : password) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      escaped += '%';
      escaped += kHex[static_cast<unsigned char>(c) >> 4];
      escaped += kHex[c & 0xf];
    }
    const rl::Url url =
        rl::parse_url("redis://user:" + escaped + "@host:7000/2?timeout_ms=5", 6379);
    EXPECT_EQ(url.password, password);
    EXPECT_EQ(url.user, "user");
    ASSERT_EQ(url.endpoints.size(), 1u);
    EXPECT_EQ(url.endpoints[0].host, "host");
    EXPECT_EQ(url.endpoints[0].port, 7000);
    EXPECT_EQ(url.path, "2");
  }
  const rl::Url url = rl::parse_url("redis://:S3cr/3t?P#w@host", 6379);
  EXPECT_EQ(url.password, "S3cr/3t?P#w");
  EXPECT_EQ(url.endpoints.at(0).host, "host");
}

TEST(Url, NoMessageCarriesThePassword) {
  const std::string secret = "S3cr3tPw";
  for (const std::string text : {
           "redis://:S3cr3tPw%zz@127.0.0.1:6379",
           "redis://user:S3cr3tPw%4@127.0.0.1:6379",
           "redis://:S3cr3tPw@:6379",
           "redis://:S3cr3tPw@host:port",
           "redis://:S3cr3tPw@host:70000",
           "redis://:S3cr3tPw@[::1",
           "redis//:S3cr3tPw@host",
           ":S3cr3tPw@host",
           "redis://:S3cr3tPw@host?bad",
           "redis://:S3cr3tPw@host#frag",
           "redis://:S3cr/3tPw@host:x",
           "redis://:S3cr?3tPw@host,",
       }) {
    const std::string message = failure_of(text);
    EXPECT_NE(message, "") << text;
    EXPECT_EQ(message.find(secret), std::string::npos) << message;
    EXPECT_EQ(message.find("S3cr"), std::string::npos) << message;
  }
  // Through the C ABI, the same.
  rl_store* store = nullptr;
  rl_error* err = nullptr;
  EXPECT_EQ(rl_store_open("redis://:S3cr3tPw%zz@127.0.0.1:6379", nullptr, &store, &err),
            RL_E_INVALID_ARG);
  EXPECT_EQ(std::string(rl_error_message(err)).find(secret), std::string::npos);
  rl_error_free(err);
}

TEST(Url, MalformedHostsAreRefused) {
  const std::string long_host(10 * 1024, 'h');
  for (const std::string& text : std::vector<std::string>{
           "redis://[", "redis://[]:1", "redis://[]", "redis://::1", "redis://::1:6379",
           "redis://host,", "redis://,host", "redis://a,,b", "redis://[::1]x", "redis://[zz]:1",
           "redis://ho st", "redis://host:", "redis://h\x01st", "redis://" + long_host,
           "redis://host:0", "redis://host:65536", "redis://host:-1",
           // Found by fuzz_url: every shown byte escaped made a 350-byte message.
           "redis://" + std::string(70, '\xff')}) {
    const std::string message = failure_of(text);
    EXPECT_NE(message, "") << text;
    EXPECT_LT(message.size(), 300u) << message;
  }
}

TEST(Url, WellFormedHostsParse) {
  rl::Url url = rl::parse_url("redis+cluster://a:1,[::1]:2,b-c.d_e,[fe80::1]", 6379);
  ASSERT_EQ(url.endpoints.size(), 4u);
  EXPECT_EQ(url.endpoints[0].host, "a");
  EXPECT_EQ(url.endpoints[1].host, "::1");
  EXPECT_EQ(url.endpoints[1].port, 2);
  EXPECT_EQ(url.endpoints[2].port, 6379);
  EXPECT_EQ(url.endpoints[3].host, "fe80::1");
  url = rl::parse_url("memory://?clock=manual", 6379);
  EXPECT_TRUE(url.endpoints.empty());
  EXPECT_EQ(url.query.at(0).second, "manual");
}

}  // namespace
