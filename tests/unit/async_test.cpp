// rl_limiter_acquire_async and rl_store_close: every callback runs exactly
// once, on a thread of rl's (never the caller's, so never inside the call);
// close completes calls in flight with RL_E_SHUTDOWN before it returns.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "capi_helpers.h"

namespace {

constexpr int kCalls = 1000;

// What the callbacks saw, shared with the test.
struct Completions {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> runs[kCalls] = {};
  std::atomic<int> on_caller_thread{0}, admitted{0}, shut_down{0}, other{0}, total{0};
  std::atomic<bool> close_returned{false};
  std::atomic<int> after_close{0};
  // The first callback waits here until the test opens the gate.
  std::mutex mutex;
  std::condition_variable changed;
  bool gate_open = true;
};

struct Slot {
  Completions* c;
  int index;  // -1: not one of the numbered calls
};

void on_done(void* user_data, rl_status status, const rl_decision* d, const rl_error* err) {
  const Slot* slot = static_cast<const Slot*>(user_data);
  Completions& c = *slot->c;
  if (slot->index == 0) {
    std::unique_lock lock(c.mutex);
    c.changed.wait(lock, [&] { return c.gate_open; });
  }
  if (slot->index >= 0) c.runs[slot->index]++;
  if (std::this_thread::get_id() == c.caller) c.on_caller_thread++;
  if (c.close_returned) c.after_close++;
  if (status == RL_OK && d != nullptr && err == nullptr) {
    c.admitted += d->allowed;
  } else if (status == RL_E_SHUTDOWN && d == nullptr && rl_error_status(err) == RL_E_SHUTDOWN) {
    c.shut_down++;
  } else {
    c.other++;
  }
  std::lock_guard lock(c.mutex);
  c.total++;
  c.changed.notify_all();
}

// Starts kCalls async acquires of one unit on key "k", numbered 0.. in
// their slots (which must outlive the calls).
std::vector<Slot> start_calls(rl_limiter* lim, Completions& c) {
  std::vector<Slot> slots;
  for (int i = 0; i < kCalls; ++i) slots.push_back({&c, i});
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  for (Slot& slot : slots) {
    EXPECT_EQ(rl_limiter_acquire_async(lim, &req, on_done, &slot, nullptr), RL_OK);
  }
  return slots;
}

TEST(Async, EveryCallbackRunsOnceOnAnotherThread) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "100/1h"}});
  Completions c;
  std::vector<Slot> slots = start_calls(lim.get(), c);
  {
    std::unique_lock lock(c.mutex);
    c.changed.wait(lock, [&] { return c.total == kCalls; });
  }
  store.reset();  // close: joins rl's thread, so a second run would have shown by now
  for (int i = 0; i < kCalls; ++i) EXPECT_EQ(c.runs[i].load(), 1) << "call " << i;
  EXPECT_EQ(c.on_caller_thread.load(), 0);
  EXPECT_EQ(c.admitted.load(), 100);
  EXPECT_EQ(c.other.load(), 0);
}

TEST(Async, CloseCompletesCallsInFlightWithShutdownBeforeItReturns) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "100/1h"}});
  Completions c;
  c.gate_open = false;  // the first callback holds rl's thread: the rest queue up
  std::vector<Slot> slots = start_calls(lim.get(), c);
  std::thread closer([&] {
    rl_store_close(store.get());
    c.close_returned = true;
  });
  // Once close has begun, new calls fail at once; then let the first callback go.
  Slot late{&c, -1};
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  int late_started = 0;
  rl_error* err = nullptr;
  while (rl_limiter_acquire_async(lim.get(), &req, on_done, &late, &err) == RL_OK) {
    late_started++;  // close has not begun yet: one more call in flight
    std::this_thread::yield();
  }
  EXPECT_EQ(rl_error_status(err), RL_E_SHUTDOWN);
  rl_error_free(err);
  {
    std::lock_guard lock(c.mutex);
    c.gate_open = true;
    c.changed.notify_all();
  }
  closer.join();
  const int total_at_close = c.total.load();
  store.reset();
  EXPECT_EQ(c.after_close.load(), 0);
  EXPECT_EQ(total_at_close, kCalls + late_started);
  EXPECT_EQ(c.total.load(), total_at_close);
  for (int i = 0; i < kCalls; ++i) EXPECT_EQ(c.runs[i].load(), 1) << "call " << i;
  // Every call but the first was still queued: they end in shutdown. The
  // first may have been decided before close began, or drained with the rest.
  EXPECT_LE(c.admitted.load(), 1);
  EXPECT_EQ(c.shut_down.load() + c.admitted.load(), kCalls + late_started);
  EXPECT_EQ(c.other.load(), 0);
}

TEST(Async, CallsAfterCloseFailWithShutdown) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "100/1h"}});
  rl_store_close(store.get());
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  rl_decision d = rl_test::blank_decision();
  rl_error* err = nullptr;
  EXPECT_EQ(rl_limiter_acquire(lim.get(), &req, &d, &err), RL_E_SHUTDOWN);
  EXPECT_EQ(rl_error_status(err), RL_E_SHUTDOWN);
  rl_error_free(err);
  EXPECT_EQ(rl_limiter_peek(lim.get(), &req, &d, nullptr), RL_E_SHUTDOWN);
  EXPECT_EQ(rl_limiter_reset(lim.get(), "k", 1, nullptr), RL_E_SHUTDOWN);
  EXPECT_EQ(rl_limiter_acquire_batch(lim.get(), &req, 1, &d, nullptr), RL_E_SHUTDOWN);
  Completions c;
  Slot slot{&c, 0};
  EXPECT_EQ(rl_limiter_acquire_async(lim.get(), &req, on_done, &slot, nullptr), RL_E_SHUTDOWN);
  EXPECT_EQ(c.total.load(), 0);  // a call that did not start never calls back
}

}  // namespace
