// rediss://, redis+sentinel:// and redis+cluster:// settings: what is wrong is refused when the
// store opens, before any connection, naming the setting and never a
// credential.
#include <gtest/gtest.h>

#include <string>

#include "error.h"
#include "store.h"

namespace {

// The status and message of opening `url`; nothing here reaches a server
// (port 1 on loopback refuses at once when something does try).
std::pair<rl::Code, std::string> open_failure(const std::string& url) {
  try {
    rl::open_store(url, {});
  } catch (const rl::Error& e) {
    return {e.code(), e.what()};
  }
  return {rl::Code::ok, ""};
}

void expect_invalid(const std::string& url, const std::string& needle) {
  const auto [code, message] = open_failure(url);
  EXPECT_EQ(code, rl::Code::invalid_arg) << url << ": " << message;
  EXPECT_NE(message.find(needle), std::string::npos) << url << ": " << message;
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
}

TEST(TopologyUrl, TlsSettingsBelongToRediss) {
  expect_invalid("redis://127.0.0.1:1?tls_ca_file=/tmp/ca.pem", "tls_ca_file: only rediss://");
  expect_invalid("redis://127.0.0.1:1?tls_insecure_skip_verify=true",
                 "tls_insecure_skip_verify: only rediss://");
}

TEST(TopologyUrl, TlsValuesAreChecked) {
  expect_invalid("rediss://127.0.0.1:1?tls_insecure_skip_verify=yes",
                 "tls_insecure_skip_verify: 'yes' is not true or false");
  expect_invalid("rediss://127.0.0.1:1?tls_server_name=a%20b", "tls_server_name");
  expect_invalid("rediss://127.0.0.1:1?tls_ca_file=/nonexistent/ca.pem",
                 "tls_ca_file: cannot read '/nonexistent/ca.pem'");
  expect_invalid("rediss://127.0.0.1:1?tls_key_file=/tmp/k.pem",
                 "tls_key_file: is set without tls_cert_file");
}

TEST(TopologyUrl, SentinelNeedsAMasterNameAndOwnsItsSettings) {
  expect_invalid("redis+sentinel://127.0.0.1:1", "master's name");
  expect_invalid("redis+sentinel://127.0.0.1:1/", "master's name");
  expect_invalid("redis+sentinel://127.0.0.1:1/m/x", "url: database");
  expect_invalid("redis://127.0.0.1:1?sentinel_password=s3cret",
                 "sentinel_password: only redis+sentinel://");
  expect_invalid("redis+sentinel://127.0.0.1:1/m?sentinel_user=u",
                 "sentinel_user: is set without sentinel_password");
  expect_invalid("redis+sentinel://127.0.0.1:1/m?sentinel_password=", "sentinel_password");
}

TEST(TopologyUrl, SeveralHostsOnlyForSentinel) {
  expect_invalid("rediss://a:1,b:2", "takes one host");
}

TEST(TopologyUrl, ClusterHasNoDatabaseAndNoOtherTopologysSettings) {
  expect_invalid("redis+cluster://127.0.0.1:1/1", "redis+cluster:// has no database");
  expect_invalid("redis+cluster://127.0.0.1:1?sentinel_password=s3cret",
                 "sentinel_password: only redis+sentinel://");
  expect_invalid("redis+cluster://127.0.0.1:1?tls_ca_file=/tmp/ca.pem",
                 "tls_ca_file: only rediss://");
}

TEST(TopologyUrl, AClusterThatIsDownStillOpens) {
  // As for redis://: calls fail until a node answers.
  EXPECT_EQ(open_failure("redis+cluster://127.0.0.1:1,127.0.0.1:2").first, rl::Code::ok);
}

}  // namespace
