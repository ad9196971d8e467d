// rediss://: TLS servers of scripts/lib/redis-tls.sh (a CA made for the
// run). A verified connection decides; every way verification or mutual TLS
// can fail is a clear error naming the cause, and never a credential.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include "redis_env.h"

namespace rl::test {
namespace {

using Clock = std::chrono::steady_clock;
using Us = std::chrono::microseconds;

std::string tls_file(const std::string& name) {
  return env_or_fail("RL_TEST_TLS_DIR") + "/" + name;
}

// rediss://HOST:PORT?prefix=...&tls_ca_file=<ca.pem>&<extra>
std::string rediss_url(const std::string& port_variable, const std::string& extra = "",
                       const std::string& host = "127.0.0.1", const std::string& credentials = "") {
  return "rediss://" + credentials + host + ":" + env_or_fail(port_variable.c_str()) +
         "?prefix=" + unique_prefix() + "&connect_timeout_ms=2000" +
         (extra.find("tls_ca_file") == std::string::npos ? "&tls_ca_file=" + tls_file("ca.pem")
                                                         : "") +
         (extra.empty() ? "" : "&" + extra);
}

Outcome one_acquire(const std::string& url) {
  auto store = open_store(url, {});
  Limiter limiter(store, limiter_settings("gcra", "5/s"));
  return limiter.run(Op::acquire, "k", 1);
}

// Opening `url` fails with `code`, naming every needle, within the connect
// timeout (a TLS failure is not retried until the deadline).
void expect_open_error(const std::string& url, Code code, std::vector<std::string> needles) {
  const auto start = Clock::now();
  try {
    one_acquire(url);
    ADD_FAILURE() << "opening succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "no '" << n << "' in " << e.what();
    EXPECT_EQ(std::string(e.what()).find("tls-secret"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500));
}

TEST(Tls, VerifiedConnectionDecides) {
  const Outcome o = one_acquire(rediss_url("RL_TEST_REDISS_PORT"));
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_TRUE(o.verdict.allowed);
}

TEST(Tls, HostNameIsVerifiedAgainstTheCertificate) {
  // The certificate names localhost and 127.0.0.1: both verify.
  const Outcome o = one_acquire(rediss_url("RL_TEST_REDISS_PORT", "", "localhost"));
  ASSERT_EQ(o.code, Code::ok) << o.message;
}

TEST(Tls, WrongCaIsAClearError) {
  expect_open_error(rediss_url("RL_TEST_REDISS_PORT", "tls_ca_file=" + tls_file("other-ca.pem"),
                               "127.0.0.1", ":tls-secret@"),
                    Code::auth, {"certificate failed verification", "tls_ca_file"});
}

TEST(Tls, HostNameMismatchIsAClearError) {
  expect_open_error(rediss_url("RL_TEST_REDISS_PORT", "tls_server_name=wrong.example"), Code::auth,
                    {"certificate failed verification", "hostname mismatch"});
}

TEST(Tls, SkippingVerificationIsAnExplicitSetting) {
  const Outcome o =
      one_acquire(rediss_url("RL_TEST_REDISS_PORT", "tls_ca_file=" + tls_file("other-ca.pem") +
                                                        "&tls_insecure_skip_verify=true"));
  ASSERT_EQ(o.code, Code::ok) << o.message;
}

TEST(Tls, MutualTlsWorksWithAClientCertificate) {
  const Outcome o = one_acquire(rediss_url(
      "RL_TEST_REDISS_MTLS_PORT",
      "tls_cert_file=" + tls_file("client.pem") + "&tls_key_file=" + tls_file("client.key")));
  ASSERT_EQ(o.code, Code::ok) << o.message;
  EXPECT_TRUE(o.verdict.allowed);
}

// Under TLS 1.3 the server judges the client's certificate after the
// client's handshake is done: its refusal is an alert rl reads (auth, at
// open), or, when the server closes first, only a closed connection (an
// outage), whose message still names the setting to look at.
void expect_client_certificate_refused(const std::string& url) {
  try {
    const Outcome o = one_acquire(url);
    EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
    EXPECT_NE(o.message.find("tls_cert_file"), std::string::npos) << o.message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::auth) << e.what();
    EXPECT_NE(std::string(e.what()).find("refused the client certificate"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("tls_cert_file"), std::string::npos) << e.what();
  }
}

TEST(Tls, MutualTlsWithoutAClientCertificateIsAClearError) {
  expect_client_certificate_refused(rediss_url("RL_TEST_REDISS_MTLS_PORT"));
}

// A certificate of a CA the server does not know: its "unknown ca" alert.
TEST(Tls, MutualTlsWithACertificateOfAnotherCaIsAClearError) {
  expect_client_certificate_refused(rediss_url(
      "RL_TEST_REDISS_MTLS_PORT",
      "tls_cert_file=" + tls_file("stranger.pem") + "&tls_key_file=" + tls_file("stranger.key")));
}

// Without verification OpenSSL still records what the chain's check found
// (here: another CA), but nothing failed for it: the refused client
// certificate is the cause. The text rules asked for the verify result
// first and blamed the server's certificate.
TEST(Tls, SkippedVerificationIsNotBlamedForARefusedClientCertificate) {
  const std::string url =
      rediss_url("RL_TEST_REDISS_MTLS_PORT",
                 "tls_ca_file=" + tls_file("other-ca.pem") + "&tls_insecure_skip_verify=true");
  expect_client_certificate_refused(url);
  try {
    const Outcome o = one_acquire(url);
    EXPECT_EQ(o.message.find("failed verification"), std::string::npos) << o.message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("failed verification"), std::string::npos) << e.what();
  }
}

// A loopback server that is not a TLS server. To each connection it reads
// what comes (a TLS ClientHello), answers `reply` (none: it says nothing),
// closes its side, and waits for the client to close.
class NotTlsServer {
 public:
  explicit NotTlsServer(std::string reply) : reply_(std::move(reply)) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(listener_, 8);
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~NotTlsServer() {
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }
  std::string url(const std::string& extra) const {
    return "rediss://127.0.0.1:" + std::to_string(port_) + "?prefix=" + unique_prefix() +
           "&tls_ca_file=" + tls_file("ca.pem") + "&" + extra;
  }

 private:
  void serve() {
    for (;;) {
      const int c = accept(listener_, nullptr, nullptr);
      if (c < 0) return;
      char buffer[4096];
      if (recv(c, buffer, sizeof buffer, 0) > 0 && !reply_.empty())
        send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      // A FIN, not a reset: nothing the client sent is left unread.
      shutdown(c, SHUT_WR);
      timeval wait{2, 0};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
      while (recv(c, buffer, sizeof buffer, 0) > 0) {
      }
      close(c);
    }
  }

  const std::string reply_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A plain server that answers the ClientHello (here as Redis answers a
// command it does not know): its reply is not a TLS record.
TEST(Tls, APlainServerThatAnswersSaysItIsNotTls) {
  NotTlsServer server("-ERR unknown command\r\n");
  expect_open_error(server.url("connect_timeout_ms=1000"), Code::auth,
                    {"does not speak TLS on this port", "use redis:// for a plain port"});
}

// A server that closes in the middle of the TLS handshake: an outage (the
// next attempt may succeed), not a configuration error.
TEST(Tls, AServerThatClosesMidHandshakeIsAnOutage) {
  NotTlsServer server("");
  auto store = open_store(server.url("connect_timeout_ms=1000&timeout_ms=1000"), {});
  Limiter limiter(store, limiter_settings("gcra", "5/s"));
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
  EXPECT_NE(o.message.find("connection closed by the server"), std::string::npos) << o.message;
}

// A plain server reads a TLS hello as a command that never ends: the
// handshake goes unanswered until connect_timeout_ms, then says why.
TEST(Tls, TlsToAPlainPortSaysSo) {
  auto store = open_store("rediss://127.0.0.1:" + env_or_fail("RL_TEST_REDIS_PORT") +
                              "?tls_ca_file=" + tls_file("ca.pem") +
                              "&connect_timeout_ms=200&timeout_ms=1000",
                          {});
  Limiter limiter(store, limiter_settings("gcra", "5/s"));
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
  EXPECT_NE(o.message.find("TLS handshake (a plain port? use redis://)"), std::string::npos)
      << o.message;
}

TEST(Tls, PlaintextToATlsPortSaysSo) {
  auto store = open_store("redis://127.0.0.1:" + env_or_fail("RL_TEST_REDISS_PORT") +
                              "?connect_timeout_ms=500&timeout_ms=500",
                          {});
  Limiter limiter(store, limiter_settings("gcra", "5/s"));
  const Outcome o = limiter.run(Op::acquire, "k", 1);
  EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
  EXPECT_NE(o.message.find("rediss://"), std::string::npos) << o.message;
}

TEST(Tls, FilesThatDoNotLoadNameTheSetting) {
  auto expect_invalid = [](const std::string& extra, const std::string& needle) {
    try {
      open_store(rediss_url("RL_TEST_REDISS_PORT", extra), {});
      ADD_FAILURE() << extra << " opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::invalid_arg) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_invalid("tls_ca_file=/nonexistent/ca.pem",
                 "tls_ca_file: cannot read '/nonexistent/ca.pem': No such file");
  expect_invalid("tls_ca_file=" + tls_file("client.key"), "tls_ca_file: cannot load");
  expect_invalid("tls_ca_dir=/nonexistent", "tls_ca_dir");
  expect_invalid(
      "tls_cert_file=" + tls_file("client.pem") + "&tls_key_file=" + tls_file("server.key"),
      "tls_key_file");
  expect_invalid("tls_cert_file=" + tls_file("client.pem"), "without tls_key_file");
  // TLS settings on a plain URL are a mistake, not ignored.
  try {
    open_store(redis_url("tls_ca_file=" + tls_file("ca.pem")), {});
    ADD_FAILURE() << "tls_ca_file on redis:// opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("only rediss://"), std::string::npos) << e.what();
  }
}

// A TLS connection that breaks once it is up is an outage like any other
// (never RL_E_AUTH), and the store reconnects over TLS.
TEST(Tls, ALostConnectionIsAnOutageAndReconnects) {
  auto store =
      open_store(rediss_url("RL_TEST_REDISS_PORT", "reconnect_max_ms=50&breaker_failures=0"), {});
  Limiter limiter(store, limiter_settings("gcra", "1000000/s"));
  ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
  shell("redis-cli --tls --cacert " + tls_file("ca.pem") + " -p " +
        env_or_fail("RL_TEST_REDISS_PORT") + " client kill type normal");
  const auto start = Clock::now();
  for (;;) {
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    if (o.code == Code::ok) break;
    // Between reconnect attempts calls fail at once: many, all outages.
    ASSERT_EQ(o.code, Code::backend_unavailable) << o.message;
    ASSERT_LT(Clock::now() - start, std::chrono::seconds(1)) << o.message;
  }
  std::cout << "TLS reconnect: first success "
            << std::chrono::duration_cast<Us>(Clock::now() - start).count() / 1000
            << " ms after the connection was killed\n";
}

// The figures of docs/redis.md: the cost of a TLS connection (open: TCP +
// TLS handshake + AUTH/PING) and of a decision over it, beside plain TCP.
TEST(Tls, HandshakeAndDecisionCost) {
  auto measure = [](const std::string& url, const char* what) {
    std::vector<int64_t> opens;
    std::vector<int64_t> decisions;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = Clock::now();
      auto store = open_store(url, {});
      Limiter limiter(store, limiter_settings("gcra", "1000000/s"));
      ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
      opens.push_back(std::chrono::duration_cast<Us>(Clock::now() - t0).count());
      for (int j = 0; j < 400; ++j) {
        const auto s = Clock::now();
        ASSERT_EQ(limiter.run(Op::acquire, "k", 1).code, Code::ok);
        decisions.push_back(std::chrono::duration_cast<Us>(Clock::now() - s).count());
      }
    }
    std::sort(opens.begin(), opens.end());
    std::sort(decisions.begin(), decisions.end());
    std::cout << what << ": open + first decision median " << opens[opens.size() / 2]
              << " us; sync decision median " << decisions[decisions.size() / 2] << " us, p99 "
              << decisions[decisions.size() * 99 / 100] << " us\n";
  };
  measure(redis_url(), "tcp");
  measure(rediss_url("RL_TEST_REDISS_PORT"), "tls");
}

}  // namespace
}  // namespace rl::test
