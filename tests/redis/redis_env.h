// Shared by the Redis tests: the servers of scripts/with-redis, stores with
// a prefix of their own, and redis-cli for looking at (or breaking) Redis.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "limiter.h"
#include "store.h"

namespace rl::test {

// The value of a variable set by scripts/with-redis; fails the test without it.
inline std::string env_or_fail(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    ADD_FAILURE() << name << " is not set: run the Redis tests under scripts/with-redis -- ...";
    throw std::runtime_error(std::string(name) + " is not set");
  }
  return value;
}

// A prefix no other test or run uses, so tests never see each other's keys.
inline std::string unique_prefix() {
  static std::atomic<int> next{0};
  return "t" + std::to_string(getpid()) + "-" + std::to_string(next++);
}

// "redis://...?prefix=...&<extra>"
inline std::string redis_url(const std::string& extra = "",
                             const std::string& prefix = unique_prefix()) {
  return env_or_fail("RL_TEST_REDIS_URL") + "?prefix=" + prefix +
         (extra.empty() ? "" : "&" + extra);
}

// The ports a scripts/with-redis variable lists, space-separated.
inline std::vector<int> ports_of(const char* variable) {
  std::vector<int> ports;
  std::istringstream in(env_or_fail(variable));
  for (int p; in >> p;) ports.push_back(p);
  return ports;
}

// "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3": the three sentinels.
inline std::string sentinel_hosts() {
  std::string hosts;
  for (int port : ports_of("RL_TEST_SENTINEL_PORTS")) {
    hosts += (hosts.empty() ? "127.0.0.1:" : ",127.0.0.1:") + std::to_string(port);
  }
  return hosts;
}

// The same store URL for each topology scripts/with-redis starts:
// "redis" (one server), "sentinel" (its master through its sentinels),
// "cluster" (three masters) and "cluster_tls" (the cluster over TLS).
inline std::string topology_url(const std::string& topology, const std::string& extra = "") {
  std::string url;
  if (topology == "redis") {
    url = env_or_fail("RL_TEST_REDIS_URL") + "?";
  } else if (topology == "sentinel") {
    url = "redis+sentinel://:" + env_or_fail("RL_TEST_SENTINEL_DATA_PASSWORD") + "@" +
          sentinel_hosts() + "/" + env_or_fail("RL_TEST_SENTINEL_MASTER") +
          "?sentinel_password=" + env_or_fail("RL_TEST_SENTINEL_PASSWORD") + "&";
  } else if (topology == "cluster") {
    url = env_or_fail("RL_TEST_CLUSTER_URL") + "?";
  } else {
    url = env_or_fail("RL_TEST_CLUSTER_TLS_URL") + "&";
  }
  return url + "prefix=" + unique_prefix() + (extra.empty() ? "" : "&" + extra);
}

inline const char* const kTopologies[] = {"redis", "sentinel", "cluster", "cluster_tls"};

inline std::shared_ptr<Store> open_redis(const std::string& extra = "") {
  return open_store(redis_url(extra), {});
}

inline Settings limiter_settings(const std::string& algorithm, const std::string& limit,
                                 const std::string& name = "t") {
  Settings s;
  s.set("algorithm", algorithm);
  s.set("limit", limit);
  s.set("name", name);
  return s;
}

// Runs a shell command; returns its output (stdout and stderr).
inline std::string shell(const std::string& command_line) {
  const std::string command = command_line + " 2>&1";
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::array<char, 4096> buffer;
  while (pipe && fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
  return out;
}

// Runs redis-cli against the main test server.
inline std::string redis_cli(const std::string& args) {
  return shell("redis-cli -p " + env_or_fail("RL_TEST_REDIS_PORT") + " " + args);
}

inline ManualClock& manual_clock(Store& store) {
  return dynamic_cast<ManualClock&>(store.clock());
}

// Timeouts fire on the I/O thread: allow this much past timeout_ms (it is
// about a millisecond on an idle machine; sanitizers and CPU steal need more).
constexpr std::chrono::milliseconds kSlack{150};

inline const char* const kAlgorithms[] = {"gcra", "token_bucket", "sliding_log", "sliding_window",
                                          "fixed_window"};

}  // namespace rl::test
