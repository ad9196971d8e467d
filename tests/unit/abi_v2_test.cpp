// The calls and struct versions added so that bindings stop rebuilding them:
// rl_store_describe, rl_limiter_name, rl_decision.limit_index,
// rl_request.timeout_us, and callers built against version 1 of rl.h, whose
// structs are smaller (run under ASan, a read past them is an error).
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>

#include "capi_helpers.h"

namespace {

using rl_test::ErrorPtr;

// A call that must fail with RL_E_INVALID_ARG and a message naming `what`.
template <class Call>
::testing::AssertionResult invalid_naming(Call call, const std::string& what) {
  rl_error* raw = nullptr;
  const rl_status status = call(&raw);
  ErrorPtr err(raw);
  if (status != RL_E_INVALID_ARG) {
    return ::testing::AssertionFailure() << "status " << status << ": " << rl_error_message(raw);
  }
  if (std::string(rl_error_message(raw)).find(what) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "message does not name " << what << ": " << rl_error_message(raw);
  }
  return ::testing::AssertionSuccess();
}

rl_test::StorePtr open_store(const char* url) {
  rl_store* store = nullptr;
  EXPECT_EQ(rl_store_open(url, nullptr, &store, nullptr), RL_OK);
  return rl_test::StorePtr(store);
}

TEST(StoreDescribe, SaysWhatTheStoreIs) {
  auto manual = open_store("memory://?clock=manual");
  rl_store_info info = RL_STORE_INFO_INIT;
  ASSERT_EQ(rl_store_describe(manual.get(), &info, nullptr), RL_OK);
  EXPECT_EQ(info.version, 2u);
  EXPECT_EQ(info.in_process, 1);
  EXPECT_EQ(info.manual_clock, 1);
  EXPECT_STREQ(info.scheme, "memory");
  // Version 2: nothing decides in Redis for memory://.
  EXPECT_EQ(info.script_mode, nullptr);
  EXPECT_EQ(info.lua_mode, nullptr);
  EXPECT_EQ(info.module_nodes, 0u);
  EXPECT_EQ(info.lua_nodes, 0u);

  auto monotonic = open_store("memory://");
  info = RL_STORE_INFO_INIT;
  ASSERT_EQ(rl_store_describe(monotonic.get(), &info, nullptr), RL_OK);
  EXPECT_EQ(info.manual_clock, 0);
  EXPECT_EQ(info.in_process, 1);

  rl_store_close(monotonic.get());  // describing needs no open store
  info = RL_STORE_INFO_INIT;
  EXPECT_EQ(rl_store_describe(monotonic.get(), &info, nullptr), RL_OK);
  EXPECT_STREQ(info.scheme, "memory");
}

TEST(StoreDescribe, BadInputNamesTheArgument) {
  auto store = rl_test::open_manual_store();
  rl_store_info info = RL_STORE_INFO_INIT;
  EXPECT_TRUE(
      invalid_naming([&](rl_error** e) { return rl_store_describe(nullptr, &info, e); }, "store"));
  EXPECT_TRUE(invalid_naming(
      [&](rl_error** e) { return rl_store_describe(store.get(), nullptr, e); }, "info"));
  for (uint32_t version : {0u, RL_STORE_INFO_VERSION + 1u}) {
    rl_store_info bad{};
    bad.version = version;
    EXPECT_TRUE(invalid_naming(
        [&](rl_error** e) { return rl_store_describe(store.get(), &bad, e); }, "info.version"));
    EXPECT_EQ(bad.scheme, nullptr) << "a refused struct is left alone";
  }
}

TEST(LimiterName, IsTheNameSettingOrDefault) {
  auto store = rl_test::open_manual_store();
  auto unnamed = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  auto named = rl_test::make_limiter(store.get(), {{"limit", "10/s"}, {"name", "api.v2"}});
  EXPECT_STREQ(rl_limiter_name(unnamed.get()), "default");
  EXPECT_STREQ(rl_limiter_name(named.get()), "api.v2");
  EXPECT_EQ(rl_limiter_name(nullptr), nullptr);
  const char* before = rl_limiter_name(named.get());
  rl_store_close(store.get());  // valid for the limiter's life, closed store or not
  EXPECT_EQ(rl_limiter_name(named.get()), before);
  EXPECT_STREQ(rl_limiter_name(named.get()), "api.v2");
}

TEST(LimitIndex, NamesTheDecidingLimitWhenLimitsShareAValue) {
  // "100/s, 100/h": both limits are 100, so only the index tells them apart.
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "100/s, 100/h"}});
  rl_decision d = rl_test::acquire(lim.get(), "k", 100);
  EXPECT_EQ(d.limit_index, 0) << "a tie goes to the first limit";
  EXPECT_EQ(d.remaining, 0);
  rl_test::advance(store.get(), 1000000);  // 100/s is full again, 100/h is not
  d = rl_test::acquire(lim.get(), "k");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.limit, 100);
  EXPECT_EQ(d.limit_index, 1);
  d = rl_test::peek(lim.get(), "k", 0);
  EXPECT_EQ(d.limit_index, 1);

  // The async paths carry it too (their single decisions are the newest version).
  struct Seen {
    std::mutex mutex;
    std::condition_variable done;
    int index = -1;
    uint32_t version = 0;
  } seen;
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  auto on_done = [](void* user, rl_status, const rl_decision* decision, const rl_error*) {
    auto* s = static_cast<Seen*>(user);
    std::lock_guard lock(s->mutex);
    s->index = decision != nullptr ? decision->limit_index : -2;
    s->version = decision != nullptr ? decision->version : 0;
    s->done.notify_all();
  };
  ASSERT_EQ(rl_limiter_acquire_async(lim.get(), &req, on_done, &seen, nullptr), RL_OK);
  std::unique_lock lock(seen.mutex);
  seen.done.wait(lock, [&] { return seen.index != -1; });
  EXPECT_EQ(seen.index, 1);
  EXPECT_EQ(seen.version, uint32_t{RL_DECISION_VERSION});
}

TEST(InitMacros, SetTheVersionAndZeroTheRest) {
  const rl_request req = RL_REQUEST_INIT;
  EXPECT_EQ(req.version, 2u);
  EXPECT_EQ(req.key, nullptr);
  EXPECT_EQ(req.timeout_us, 0);
  const rl_decision d = RL_DECISION_INIT;
  EXPECT_EQ(d.version, 3u);
  EXPECT_EQ(d.limit_index, 0);
  EXPECT_EQ(d.suppression_factor, 0.0);
}

TEST(RequestTimeout, NegativeIsRefusedEverywhere) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  const std::string key = "k";
  rl_request req = rl_test::request(key, 1);
  req.timeout_us = -1;
  rl_decision d = RL_DECISION_INIT;
  EXPECT_TRUE(
      invalid_naming([&](rl_error** e) { return rl_limiter_acquire(lim.get(), &req, &d, e); },
                     "request.timeout_us"));
  EXPECT_TRUE(invalid_naming(
      [&](rl_error** e) { return rl_limiter_acquire_wait(lim.get(), &req, 0, &d, e); },
      "request.timeout_us"));
  EXPECT_TRUE(invalid_naming(
      [&](rl_error** e) {
        return rl_limiter_acquire_async(
            lim.get(), &req, [](void*, rl_status, const rl_decision*, const rl_error*) {}, nullptr,
            e);
      },
      "request.timeout_us"));
  rl_request batch[2] = {rl_test::request(key, 1), req};
  rl_decision out[2] = {RL_DECISION_INIT, RL_DECISION_INIT};
  EXPECT_TRUE(invalid_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), batch, 2, out, e); },
      "requests[1].timeout_us"));
  EXPECT_EQ(rl_test::peek(lim.get(), "k", 0).remaining, 10) << "nothing was decided";
  req.timeout_us = 1;  // memory:// never waits: any deadline is kept
  EXPECT_EQ(rl_limiter_acquire(lim.get(), &req, &d, nullptr), RL_OK);
}

// ---- Callers built against version 1 of rl.h ----

// The version-1 layouts, as an old caller's compiler laid them out.
struct RequestV1 {
  uint32_t version;
  const char* key;
  size_t key_len;
  int64_t cost;
};
struct DecisionV1 {
  uint32_t version;
  int32_t allowed;
  int64_t limit;
  int64_t remaining;
  int64_t retry_after_us;
  int64_t reset_after_us;
  int32_t source;
};
static_assert(sizeof(RequestV1) < sizeof(rl_request), "v2 requests are larger");

// On the heap, exactly as large as version 1: ASan reports any read past it.
std::unique_ptr<RequestV1> v1_request(const std::string& key, int64_t cost) {
  return std::make_unique<RequestV1>(RequestV1{1, key.data(), key.size(), cost});
}

// A version-1 decision whose bytes past `source` (padding to v1, the
// limit_index of v2) hold a pattern that must survive the call.
DecisionV1 v1_decision() {
  DecisionV1 d;
  std::memset(&d, 0xab, sizeof d);
  d.version = 1;
  return d;
}

bool tail_untouched(const DecisionV1& d) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&d);
  for (size_t i = offsetof(DecisionV1, source) + sizeof(int32_t); i < sizeof d; ++i) {
    if (bytes[i] != 0xab) return false;
  }
  return true;
}

struct StoreInfoV1 {
  uint32_t version;
  int32_t in_process;
  int32_t manual_clock;
  const char* scheme;
};
static_assert(sizeof(StoreInfoV1) < sizeof(rl_store_info), "v2 store infos are larger");

TEST(Version1, StoreInfoIsFilledUpToItsScheme) {
  auto store = rl_test::open_manual_store();
  // On the heap, exactly as large as version 1: ASan reports a write past it.
  auto info = std::make_unique<StoreInfoV1>(StoreInfoV1{1, -1, -1, nullptr});
  ASSERT_EQ(rl_store_describe(store.get(), reinterpret_cast<rl_store_info*>(info.get()), nullptr),
            RL_OK);
  EXPECT_EQ(info->version, 1u);
  EXPECT_EQ(info->in_process, 1);
  EXPECT_EQ(info->manual_clock, 1);
  EXPECT_STREQ(info->scheme, "memory");
}

TEST(Version1, RequestsAndDecisionsStillWork) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "100/s, 100/h"}});
  const std::string key = "k";
  auto req = v1_request(key, 100);
  DecisionV1 d = v1_decision();
  auto* as_request = reinterpret_cast<const rl_request*>(req.get());
  auto* as_decision = reinterpret_cast<rl_decision*>(&d);
  ASSERT_EQ(rl_limiter_acquire(lim.get(), as_request, as_decision, nullptr), RL_OK);
  EXPECT_EQ(d.allowed, 1);
  EXPECT_EQ(d.remaining, 0);
  EXPECT_EQ(d.version, 1u) << "the caller's version stays";
  EXPECT_TRUE(tail_untouched(d)) << "limit_index written into a version-1 decision";

  d = v1_decision();
  ASSERT_EQ(rl_limiter_peek(lim.get(), as_request, as_decision, nullptr), RL_OK);
  EXPECT_EQ(d.allowed, 0);
  EXPECT_TRUE(tail_untouched(d));
  d = v1_decision();
  ASSERT_EQ(rl_limiter_acquire_wait(lim.get(), as_request, 0, as_decision, nullptr), RL_OK);
  EXPECT_TRUE(tail_untouched(d));
  d = v1_decision();
  ASSERT_EQ(rl_limiter_refund(lim.get(), as_request, as_decision, nullptr), RL_OK);
  EXPECT_EQ(d.remaining, 100);
  EXPECT_TRUE(tail_untouched(d));

  std::atomic<int> calls{0};
  // Both copy the request before they return: that is where a v1 one is read.
  auto count = [](void* user, rl_status, const rl_decision*, const rl_error*) {
    ++*static_cast<std::atomic<int>*>(user);
  };
  ASSERT_EQ(rl_limiter_acquire_async(lim.get(), as_request, count, &calls, nullptr), RL_OK);
  ASSERT_EQ(rl_limiter_acquire_wait_async(lim.get(), as_request, 0, count, &calls, nullptr), RL_OK);
  store.reset();  // close: both have completed (perhaps with shutdown) when it returns
  EXPECT_EQ(calls.load(), 2);
}

TEST(Version1, BatchesStepByTheVersion1Size) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  const std::string keys[3] = {"a", "b", "c"};
  // One heap block of three version-1 requests: a version-2 stride would
  // read the wrong keys and then past the block.
  auto reqs = std::make_unique<RequestV1[]>(3);
  for (int i = 0; i < 3; ++i) reqs[i] = RequestV1{1, keys[i].data(), 1, i + 1};
  auto decisions = std::make_unique<DecisionV1[]>(3);
  for (int i = 0; i < 3; ++i) decisions[i] = v1_decision();
  ASSERT_EQ(rl_limiter_acquire_batch(lim.get(), reinterpret_cast<const rl_request*>(reqs.get()), 3,
                                     reinterpret_cast<rl_decision*>(decisions.get()), nullptr),
            RL_OK);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(decisions[i].remaining, 10 - (i + 1)) << i;
    EXPECT_TRUE(tail_untouched(decisions[i])) << i;
    EXPECT_EQ(rl_test::peek(lim.get(), keys[i], 0).remaining, 10 - (i + 1)) << keys[i];
  }
}

TEST(Version1, AnArrayMixingVersionsIsRefused) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  const std::string key = "k";
  rl_request reqs[2] = {rl_test::request(key, 1), rl_test::request(key, 1)};
  reqs[1].version = 1;
  rl_decision out[2] = {RL_DECISION_INIT, RL_DECISION_INIT};
  EXPECT_TRUE(invalid_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), reqs, 2, out, e); },
      "requests[1].version"));
  reqs[1].version = RL_REQUEST_VERSION;
  out[1].version = 1;
  EXPECT_TRUE(invalid_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), reqs, 2, out, e); },
      "decisions[1].version"));
  EXPECT_EQ(rl_test::peek(lim.get(), "k", 0).remaining, 10) << "nothing was decided";
}

}  // namespace
