// A server that is there but not ready (LOADING a dataset, BUSY with a
// script) does not fail the open: calls fail as unavailable within their
// deadline while the connection retries its handshake with backoff, and
// succeed once the server is ready.
#include <functional>
#include <iostream>
#include <thread>

#include "redis_env.h"

namespace rl::test {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

constexpr Ms kTimeout{200};
constexpr Ms kReconnectMax{100};

// The connection's own recovery, without the circuit breaker in front of it.
std::shared_ptr<Store> open_not_ready() {
  return open_redis("breaker_failures=0&timeout_ms=" + std::to_string(kTimeout.count()) +
                    "&reconnect_max_ms=" + std::to_string(kReconnectMax.count()));
}

int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<Ms>(Clock::now() - start).count();
}

// Polls the server itself (redis-cli, not rl) until its PING reply holds
// `text`; false after 10 s.
bool server_answers(const std::string& text) {
  const auto start = Clock::now();
  while (redis_cli("ping").find(text) == std::string::npos) {
    if (Clock::now() - start > std::chrono::seconds(10)) return false;
    std::this_thread::sleep_for(Ms(10));
  }
  return true;
}

// Calls while the server is not ready: each fails as unavailable, quoting
// the server's reason, within its deadline.
void expect_unavailable(Limiter& limiter, const std::string& reason) {
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    const Outcome o = limiter.run(Op::acquire, "k", 1);
    EXPECT_LE(ms_since(start), (kTimeout + kSlack).count());
    EXPECT_EQ(o.code, Code::backend_unavailable) << o.message;
    EXPECT_NE(o.message.find(reason), std::string::npos) << o.message;
  }
}

// Leaves the server as the test found it, also when an assertion failed:
// a busy script left running would block every later test.
class Restore {
 public:
  explicit Restore(std::function<void()> undo) : undo_(std::move(undo)) {}
  ~Restore() { undo_(); }
  Restore(const Restore&) = delete;
  Restore& operator=(const Restore&) = delete;

 private:
  std::function<void()> undo_;
};

// Milliseconds from now until a call succeeds; -1 after 5 s.
int64_t until_ok(Limiter& limiter) {
  const auto start = Clock::now();
  while (Clock::now() - start < std::chrono::seconds(5)) {
    if (limiter.run(Op::acquire, "k", 1).code == Code::ok) return ms_since(start);
    std::this_thread::sleep_for(Ms(5));
  }
  return -1;
}

TEST(NotReady, BusyScriptDoesNotFailTheOpenAndCallsRecoverAfterScriptKill) {
  redis_cli("config set busy-reply-threshold 50");
  std::thread script([] { redis_cli("eval 'while true do end' 0"); });
  Restore restore([&] {
    redis_cli("script kill");
    if (script.joinable()) script.join();
    redis_cli("config set busy-reply-threshold 5000");
  });
  ASSERT_TRUE(server_answers("BUSY"));

  const auto open_start = Clock::now();
  std::shared_ptr<Store> store;
  ASSERT_NO_THROW(store = open_not_ready());
  const int64_t open_ms = ms_since(open_start);
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  expect_unavailable(limiter, "BUSY");

  redis_cli("script kill");
  script.join();
  const int64_t recovery_ms = until_ok(limiter);
  std::cout << "[figure] BUSY: open took " << open_ms << " ms; first success " << recovery_ms
            << " ms after SCRIPT KILL\n";
  ASSERT_GE(recovery_ms, 0) << "no success after SCRIPT KILL";
  EXPECT_LE(recovery_ms, (kReconnectMax + kSlack).count());
}

TEST(NotReady, LoadingDatasetDoesNotFailTheOpenAndCallsRecoverWhenLoaded) {
  // 2,000 keys at 1 ms each: a load of about 2 s, answering LOADING meanwhile.
  redis_cli("debug populate 2000 rl-not-ready-test");
  redis_cli("config set key-load-delay 1000");
  redis_cli("config set loading-process-events-interval-bytes 1024");
  std::thread reload([] { redis_cli("debug reload"); });
  Restore restore([&] {
    reload.join();
    redis_cli("config set key-load-delay 0");
    redis_cli("config set loading-process-events-interval-bytes 2097152");
    redis_cli(
        "eval \"for _, k in ipairs(redis.call('keys', 'rl-not-ready-test:*')) do "
        "redis.call('del', k) end\" 0");
  });
  ASSERT_TRUE(server_answers("LOADING"));

  const auto open_start = Clock::now();
  std::shared_ptr<Store> store;
  ASSERT_NO_THROW(store = open_not_ready());
  const int64_t open_ms = ms_since(open_start);
  Limiter limiter(store, limiter_settings("gcra", "1000/s"));
  expect_unavailable(limiter, "LOADING");

  ASSERT_TRUE(server_answers("PONG"));
  const int64_t recovery_ms = until_ok(limiter);
  std::cout << "[figure] LOADING: open took " << open_ms << " ms; first success " << recovery_ms
            << " ms after the load ended\n";
  ASSERT_GE(recovery_ms, 0) << "no success after the load ended";
  EXPECT_LE(recovery_ms, (kReconnectMax + kSlack).count());
}

}  // namespace
}  // namespace rl::test
