// Small RAII helpers for tests that go through the C ABI with a manual clock.
#pragma once

#include <gtest/gtest.h>
#include <rl/rl.h>
#include <rl_handles.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rl_test {

using StorePtr = rl_handles::Store;
using LimiterPtr = rl_handles::Limiter;
using ErrorPtr = rl_handles::Error;
using Wait = rl_handles::Wait;

using SettingList = std::vector<std::pair<std::string, std::string>>;

// memory:// with the manual clock at 0.
inline StorePtr open_manual_store() {
  rl_store* store = nullptr;
  rl_error* err = nullptr;
  EXPECT_EQ(rl_store_open("memory://?clock=manual", nullptr, &store, &err), RL_OK)
      << rl_error_message(err);
  rl_error_free(err);
  return StorePtr(store);
}

inline LimiterPtr make_limiter(rl_store* store, const SettingList& settings) {
  rl_config* cfg = rl_config_new();
  rl_error* err = nullptr;
  for (const auto& [key, value] : settings) {
    EXPECT_EQ(rl_config_set(cfg, key.c_str(), value.c_str(), &err), RL_OK) << rl_error_message(err);
  }
  rl_limiter* limiter = nullptr;
  EXPECT_EQ(rl_limiter_new(store, cfg, &limiter, &err), RL_OK) << rl_error_message(err);
  rl_error_free(err);
  rl_config_free(cfg);
  return LimiterPtr(limiter);
}

// The request points into `key`, which must outlive it.
inline rl_request request(const std::string& key, int64_t cost) {
  rl_request r = RL_REQUEST_INIT;
  r.key = key.data();
  r.key_len = key.size();
  r.cost = cost;
  return r;
}

inline rl_decision blank_decision() {
  rl_decision d{};
  d.version = RL_DECISION_VERSION;
  return d;
}

// acquire/peek that must succeed: the decision.
inline rl_decision acquire(rl_limiter* limiter, const std::string& key, int64_t cost = 1) {
  const rl_request req = request(key, cost);
  rl_decision d = blank_decision();
  rl_error* err = nullptr;
  EXPECT_EQ(rl_limiter_acquire(limiter, &req, &d, &err), RL_OK) << rl_error_message(err);
  rl_error_free(err);
  return d;
}

inline rl_decision peek(rl_limiter* limiter, const std::string& key, int64_t cost = 1) {
  const rl_request req = request(key, cost);
  rl_decision d = blank_decision();
  rl_error* err = nullptr;
  EXPECT_EQ(rl_limiter_peek(limiter, &req, &d, &err), RL_OK) << rl_error_message(err);
  rl_error_free(err);
  return d;
}

inline void advance(rl_store* store, int64_t delta_us) {
  rl_error* err = nullptr;
  EXPECT_EQ(rl_store_clock_advance(store, delta_us, &err), RL_OK) << rl_error_message(err);
  rl_error_free(err);
}

// Checks every field of a decision in one assertion, so a failure shows all.
struct Expected {
  bool allowed;
  int64_t limit;
  int64_t remaining;
  int64_t retry_after_us;
  int64_t reset_after_us;
};

inline ::testing::AssertionResult decision_is(const rl_decision& d, const Expected& e) {
  if ((d.allowed != 0) == e.allowed && d.limit == e.limit && d.remaining == e.remaining &&
      d.retry_after_us == e.retry_after_us && d.reset_after_us == e.reset_after_us) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got {allowed " << d.allowed << ", limit " << d.limit << ", remaining " << d.remaining
         << ", retry_after " << d.retry_after_us << ", reset_after " << d.reset_after_us
         << "}, expected {allowed " << e.allowed << ", limit " << e.limit << ", remaining "
         << e.remaining << ", retry_after " << e.retry_after_us << ", reset_after "
         << e.reset_after_us << "}";
}

}  // namespace rl_test
