// rl_wait_cancel: a wait whose caller gave up gives back the units it was
// admitted for exactly once, whether the admission reached the callback
// before the cancel or arrives after it; a denial gives back nothing; a
// sleeping wait ends at once; the callback runs exactly once in every case.
// Counted exactly on a manual clock: nothing counted twice, nothing lost.
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

#include "capi_helpers.h"

namespace {

// The result of one call, filled in by its callback.
struct Result {
  std::mutex mutex;
  std::condition_variable done;
  int runs = 0;
  rl_status status = RL_OK;
  rl_decision decision{};

  // The decision, once the callback ran; a test that would hang fails.
  rl_decision wait() {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(done.wait_for(lock, std::chrono::seconds(30), [&] { return runs > 0; }))
        << "the callback never ran";
    return decision;
  }
};

void on_result(void* user_data, rl_status status, const rl_decision* d, const rl_error*) {
  auto* r = static_cast<Result*>(user_data);
  std::lock_guard lock(r->mutex);
  ++r->runs;
  r->status = status;
  if (d != nullptr) r->decision = *d;
  r->done.notify_all();
}

rl_test::Wait start_wait(rl_limiter* lim, const std::string& key, int64_t cost, int64_t timeout_us,
                         Result* result) {
  const rl_request req = rl_test::request(key, cost);
  rl_wait* wait = nullptr;
  rl_error* err = nullptr;
  EXPECT_EQ(rl_limiter_acquire_wait_start(lim, &req, timeout_us, on_result, result, &wait, &err),
            RL_OK)
      << rl_error_message(err);
  rl_error_free(err);
  return rl_test::Wait(wait);
}

// What the key has left, read by an async peek: the store's thread runs
// calls in order, so every refund posted before it is counted.
int64_t remaining_after_pending_calls(rl_limiter* lim, const std::string& key) {
  const rl_request req = rl_test::request(key, 0);
  Result r;
  EXPECT_EQ(rl_limiter_call_async(lim, RL_OP_PEEK, &req, on_result, &r, nullptr), RL_OK);
  return r.wait().remaining;
}

// Holds the store's thread inside a callback until released, so that calls
// posted meanwhile run after whatever the test does next.
struct StoreThreadHold {
  std::promise<void> release;
  std::promise<void> holding;

  explicit StoreThreadHold(rl_limiter* lim) {
    const std::string key = "hold";
    const rl_request req = rl_test::request(key, 1);
    auto hold = [](void* user, rl_status, const rl_decision*, const rl_error*) {
      auto* self = static_cast<StoreThreadHold*>(user);
      self->holding.set_value();
      self->release.get_future().wait();
    };
    EXPECT_EQ(rl_limiter_acquire_async(lim, &req, hold, this, nullptr), RL_OK);
    holding.get_future().wait();
  }
};

TEST(WaitCancel, AnAdmissionArrivingAfterTheCancelIsRefundedOnce) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "5/s"}});
  ASSERT_EQ(rl_test::acquire(lim.get(), "k").remaining, 4);
  Result r;
  rl_test::Wait wait;
  {
    StoreThreadHold hold(lim.get());
    wait = start_wait(lim.get(), "k", 2, 1000000, &r);  // its acquire waits behind the hold
    rl_wait_cancel(wait.get());
    rl_wait_cancel(wait.get());  // idempotent
    hold.release.set_value();
    r.wait();
  }
  EXPECT_EQ(r.runs, 1);
  EXPECT_EQ(r.status, RL_OK);
  EXPECT_EQ(r.decision.allowed, 1) << "the admission the wait ended on, already given back";
  // Refunded before the callback ran: the 2 units are back, and only they.
  EXPECT_EQ(rl_test::peek(lim.get(), "k", 0).remaining, 4);
  rl_wait_cancel(wait.get());
  EXPECT_EQ(remaining_after_pending_calls(lim.get(), "k"), 4);
  EXPECT_EQ(r.runs, 1);
}

TEST(WaitCancel, ACancelAfterTheAdmissionReachedTheCallbackRefundsItOnce) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "5/s"}});
  ASSERT_EQ(rl_test::acquire(lim.get(), "k").remaining, 4);
  Result r;
  rl_test::Wait wait = start_wait(lim.get(), "k", 2, 1000000, &r);
  ASSERT_EQ(r.wait().allowed, 1);
  ASSERT_EQ(r.decision.remaining, 2);
  // The caller gave up even so (its answer came too late for it).
  for (int i = 0; i < 3; ++i) rl_wait_cancel(wait.get());
  EXPECT_EQ(remaining_after_pending_calls(lim.get(), "k"), 4) << "refunded once, not 0 or 3 times";
  EXPECT_EQ(r.runs, 1);
}

TEST(WaitCancel, ADenialGivesNothingBack) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "2/s"}});
  rl_test::acquire(lim.get(), "k", 2);
  Result r;
  rl_test::Wait wait = start_wait(lim.get(), "k", 1, 1000000, &r);  // manual clock: at once
  ASSERT_EQ(r.wait().allowed, 0);
  rl_wait_cancel(wait.get());
  EXPECT_EQ(remaining_after_pending_calls(lim.get(), "k"), 0);
  EXPECT_EQ(r.runs, 1);
}

TEST(WaitCancel, ADenialArrivingAfterTheCancelGivesNothingBack) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "2/s"}});
  rl_test::acquire(lim.get(), "k", 2);
  Result r;
  rl_test::Wait wait;
  {
    StoreThreadHold hold(lim.get());
    wait = start_wait(lim.get(), "k", 1, 1000000, &r);
    rl_wait_cancel(wait.get());
    hold.release.set_value();
    EXPECT_EQ(r.wait().allowed, 0);
  }
  EXPECT_EQ(remaining_after_pending_calls(lim.get(), "k"), 0);
  EXPECT_EQ(r.runs, 1);
}

TEST(WaitCancel, ASleepingWaitEndsAtOnceWithItsLastDenial) {
  rl_store* raw = nullptr;
  ASSERT_EQ(rl_store_open("memory://", nullptr, &raw, nullptr), RL_OK);
  rl_test::StorePtr store(raw);
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "1/1h"}});
  rl_test::acquire(lim.get(), "k");
  Result r;
  rl_test::Wait wait = start_wait(lim.get(), "k", 1, 7200000000, &r);  // sleeps an hour
  // Its first attempt was denied once the peek after it has run.
  EXPECT_EQ(remaining_after_pending_calls(lim.get(), "k"), 0);
  {
    std::lock_guard lock(r.mutex);
    ASSERT_EQ(r.runs, 0) << "the wait ended before the cancel";
  }
  rl_wait_cancel(wait.get());
  const rl_decision d = r.wait();  // now, not in an hour
  EXPECT_EQ(r.status, RL_OK);
  EXPECT_EQ(d.allowed, 0);
  EXPECT_GT(d.retry_after_us, 3500000000);
  wait.reset();
  store.reset();  // the hour's timer runs as shutting down: nothing more
  EXPECT_EQ(r.runs, 1);
}

TEST(WaitCancel, AWaitNeverCancelledRunsAsBeforeAndItsHandleMayGoFirst) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "5/s"}});
  Result r;
  start_wait(lim.get(), "k", 3, 0, &r).reset();  // freed before the callback runs
  EXPECT_EQ(r.wait().allowed, 1);
  EXPECT_EQ(remaining_after_pending_calls(lim.get(), "k"), 2) << "kept: nobody cancelled";
  EXPECT_EQ(r.runs, 1);
}

TEST(WaitCancel, BadArgumentsAreRefusedAndNullIsANoOp) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "5/s"}});
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  Result r;
  rl_error* raw = nullptr;
  EXPECT_EQ(rl_limiter_acquire_wait_start(lim.get(), &req, 0, on_result, &r, nullptr, &raw),
            RL_E_INVALID_ARG);
  rl_test::ErrorPtr err(raw);
  EXPECT_STREQ(rl_error_message(raw), "out: is NULL");
  rl_wait* wait = reinterpret_cast<rl_wait*>(&r);  // must be set to NULL on failure
  rl_error* raw2 = nullptr;
  EXPECT_EQ(rl_limiter_acquire_wait_start(lim.get(), &req, -1, on_result, &r, &wait, &raw2),
            RL_E_INVALID_ARG);
  rl_test::ErrorPtr err2(raw2);
  EXPECT_EQ(wait, nullptr);
  rl_store_close(store.get());
  EXPECT_EQ(rl_limiter_acquire_wait_start(lim.get(), &req, 0, on_result, &r, &wait, nullptr),
            RL_E_SHUTDOWN);
  EXPECT_EQ(wait, nullptr);
  rl_wait_cancel(nullptr);
  rl_wait_free(nullptr);
  EXPECT_EQ(r.runs, 0);
}

}  // namespace
