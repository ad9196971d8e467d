// rl_limiter_acquire_wait_async: the wait is a timer on a thread of the
// store (never a blocked thread per call), the callback runs exactly once
// and never inside the call, and closing the store completes every waiting
// call with RL_E_SHUTDOWN before rl_store_close returns.
#include <dirent.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "capi_helpers.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

// The result of one wait, filled in by its callback.
struct Result {
  std::mutex mutex;
  std::condition_variable done;
  int runs = 0;
  rl_status status = RL_OK;
  rl_decision decision{};
  std::string message;
  bool on_caller_thread = false;
  std::thread::id caller = std::this_thread::get_id();

  rl_decision wait() {
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return runs > 0; });
    return decision;
  }
};

void on_result(void* user_data, rl_status status, const rl_decision* d, const rl_error* err) {
  auto* r = static_cast<Result*>(user_data);
  std::lock_guard lock(r->mutex);
  ++r->runs;
  r->status = status;
  if (d != nullptr) r->decision = *d;
  r->message = rl_error_message(err);
  r->on_caller_thread = std::this_thread::get_id() == r->caller;
  r->done.notify_all();
}

rl_status start_wait(rl_limiter* lim, const std::string& key, int64_t cost, int64_t timeout_us,
                     Result* result, rl_error** err = nullptr) {
  const rl_request req = rl_test::request(key, cost);
  return rl_limiter_acquire_wait_async(lim, &req, timeout_us, on_result, result, err);
}

rl_test::StorePtr open_store(const char* url) {
  rl_store* store = nullptr;
  EXPECT_EQ(rl_store_open(url, nullptr, &store, nullptr), RL_OK);
  return rl_test::StorePtr(store);
}

int thread_count() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* e = readdir(dir)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(dir);
  }
  return n;
}

TEST(AcquireWaitAsync, ManualClockAnswersTheFirstDecisionOnAnotherThread) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "1/s"}});
  rl_test::acquire(lim.get(), "k");
  Result r;
  ASSERT_EQ(start_wait(lim.get(), "k", 1, 10000000, &r), RL_OK);
  const rl_decision d = r.wait();
  EXPECT_EQ(r.status, RL_OK);
  EXPECT_EQ(d.allowed, 0);
  EXPECT_EQ(d.retry_after_us, 1000000);
  EXPECT_EQ(d.version, uint32_t{RL_DECISION_VERSION});
  EXPECT_FALSE(r.on_caller_thread);
  store.reset();
  EXPECT_EQ(r.runs, 1);
}

TEST(AcquireWaitAsync, WaitsTheRetryAfterThenAdmits) {
  auto store = open_store("memory://");
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "20/s"}, {"burst", "1"}});
  ASSERT_TRUE(rl_test::acquire(lim.get(), "k").allowed);
  const rl_decision denied = rl_test::acquire(lim.get(), "k");
  ASSERT_FALSE(denied.allowed);
  const auto start = SteadyClock::now();
  Result r;
  ASSERT_EQ(start_wait(lim.get(), "k", 1, 1000000, &r), RL_OK);
  const rl_decision d = r.wait();
  const auto waited = SteadyClock::now() - start;
  EXPECT_EQ(r.status, RL_OK) << r.message;
  EXPECT_EQ(d.allowed, 1);
  // At most the 50 ms the denial announced (less the time since), so never
  // admitted before the limit allows it, and not much later either.
  EXPECT_LT(waited, std::chrono::milliseconds(1000));
  EXPECT_FALSE(r.on_caller_thread);
}

TEST(AcquireWaitAsync, AWaitPastTheTimeoutReturnsTheDenialAtOnce) {
  auto store = open_store("memory://");
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "1/1h"}});
  rl_test::acquire(lim.get(), "k");
  Result r;
  const auto start = SteadyClock::now();
  ASSERT_EQ(start_wait(lim.get(), "k", 1, 1000000, &r), RL_OK);  // 1 s < 1 h
  const rl_decision d = r.wait();
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(1)) << "it waited in vain";
  EXPECT_EQ(d.allowed, 0);
  EXPECT_GT(d.retry_after_us, 3500000000);

  Result never;  // a cost above the burst can never be admitted: no wait
  ASSERT_EQ(start_wait(lim.get(), "k", 2, 7200000000, &never), RL_OK);
  EXPECT_EQ(never.wait().retry_after_us, -1);
}

TEST(AcquireWaitAsync, TenThousandWaitsAreTimersNotThreadsAndCloseEndsThemAll) {
  constexpr int kWaits = 10000;
  auto store = open_store("memory://");
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "1/1h"}});
  rl_test::acquire(lim.get(), "k");
  // One wait first: the store's thread (and a sanitizer's helper) exist now.
  Result first;
  ASSERT_EQ(start_wait(lim.get(), "k", 1, 0, &first), RL_OK);
  first.wait();
  const int threads_before = thread_count();
  std::vector<Result> results(kWaits);
  for (Result& r : results) ASSERT_EQ(start_wait(lim.get(), "k", 1, 7200000000, &r), RL_OK);
  // Every wait is an hour away, a timer entry: not one thread was added.
  EXPECT_EQ(thread_count(), threads_before);
  rl_store_close(store.get());
  for (int i = 0; i < kWaits; ++i) {
    std::lock_guard lock(results[i].mutex);
    ASSERT_EQ(results[i].runs, 1) << "wait " << i << " not completed once by close";
    ASSERT_EQ(results[i].status, RL_E_SHUTDOWN) << i;
  }
}

TEST(AcquireWaitAsync, BadInputFailsTheCallAndNeverRunsTheCallback) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "1/s"}});
  Result r;
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  struct Case {
    rl_status status;
    const char* names;
    rl_status (*call)(rl_limiter*, const rl_request*, Result*, rl_error**);
  };
  const Case cases[] = {
      {RL_E_INVALID_ARG, "limiter",
       [](rl_limiter*, const rl_request* q, Result* res, rl_error** e) {
         return rl_limiter_acquire_wait_async(nullptr, q, 0, on_result, res, e);
       }},
      {RL_E_INVALID_ARG, "callback",
       [](rl_limiter* l, const rl_request* q, Result* res, rl_error** e) {
         return rl_limiter_acquire_wait_async(l, q, 0, nullptr, res, e);
       }},
      {RL_E_INVALID_ARG, "request",
       [](rl_limiter* l, const rl_request*, Result* res, rl_error** e) {
         return rl_limiter_acquire_wait_async(l, nullptr, 0, on_result, res, e);
       }},
      {RL_E_INVALID_ARG, "timeout_us",
       [](rl_limiter* l, const rl_request* q, Result* res, rl_error** e) {
         return rl_limiter_acquire_wait_async(l, q, -1, on_result, res, e);
       }},
      {RL_E_INVALID_ARG, "cost",
       [](rl_limiter* l, const rl_request*, Result* res, rl_error** e) {
         const std::string k = "k";
         const rl_request zero = rl_test::request(k, 0);
         return rl_limiter_acquire_wait_async(l, &zero, 0, on_result, res, e);
       }},
      {RL_E_INVALID_ARG, "key",
       [](rl_limiter* l, const rl_request*, Result* res, rl_error** e) {
         const std::string k(RL_MAX_KEY_LEN + 1, 'x');
         const rl_request longer = rl_test::request(k, 1);
         return rl_limiter_acquire_wait_async(l, &longer, 0, on_result, res, e);
       }},
  };
  for (const Case& c : cases) {
    rl_error* raw = nullptr;
    EXPECT_EQ(c.call(lim.get(), &req, &r, &raw), c.status) << c.names;
    rl_test::ErrorPtr err(raw);
    EXPECT_NE(std::string(rl_error_message(raw)).find(c.names), std::string::npos)
        << rl_error_message(raw);
  }
  rl_store_close(store.get());
  rl_error* raw = nullptr;
  EXPECT_EQ(start_wait(lim.get(), "k", 1, 0, &r, &raw), RL_E_SHUTDOWN);
  rl_error_free(raw);
  EXPECT_EQ(r.runs, 0) << "a call that failed to start ran its callback";
}

TEST(AcquireWait, FromInsideACallbackIsRefusedNotADeadlock) {
  auto store = open_store("memory://");
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "1/s"}});
  struct Inner {
    rl_limiter* lim;
    Result result;
    rl_status nested = RL_OK;
  } inner{lim.get(), {}, RL_OK};
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  auto nested = [](void* user, rl_status status, const rl_decision* d, const rl_error* err) {
    auto* in = static_cast<Inner*>(user);
    const std::string k = "k";
    const rl_request again = rl_test::request(k, 1);
    rl_decision out = RL_DECISION_INIT;
    in->nested = rl_limiter_acquire_wait(in->lim, &again, 1000, &out, nullptr);
    on_result(&in->result, status, d, err);
  };
  ASSERT_EQ(rl_limiter_acquire_async(lim.get(), &req, nested, &inner, nullptr), RL_OK);
  inner.result.wait();
  EXPECT_EQ(inner.nested, RL_E_UNSUPPORTED);
}

}  // namespace
