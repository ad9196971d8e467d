// Sync callers woken as a tree (core/sync_wake.h, core/wait_for.h): a thread
// that completes many of them inside a WakeBatch wakes only the first; each
// caller, once awake, wakes the next ones. Every caller is woken exactly
// once with its own result, also when one of them was not asleep yet, or
// will never wait (what would have completed it threw).
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "wait_for.h"

namespace rl {
namespace {

// What the callers' `start` hands over: one completion per caller, by index.
class Completions {
 public:
  explicit Completions(size_t n) : slots_(n) {}

  void put(size_t i, std::function<void(int&&)> done) {
    std::lock_guard lock(mutex_);
    slots_[i] = std::move(done);
    ++count_;
    changed_.notify_all();
  }
  // Once every caller handed its completion over.
  std::vector<std::function<void(int&&)>>& all() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return count_ == slots_.size(); });
    return slots_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::function<void(int&&)>> slots_;
  size_t count_ = 0;
};

// A gate the test opens once: callers held at it have not gone to sleep.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    opened_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

constexpr size_t kCallers = 64;

struct Callers {
  Completions completions{kCallers};
  std::vector<int> got = std::vector<int>(kCallers, -1);
  std::vector<int> returns = std::vector<int>(kCallers, 0);
  std::vector<uint64_t> wakes = std::vector<uint64_t>(kCallers, 0);
  std::vector<std::thread> threads;

  // Caller i: wait_for; `held` callers stop at `gate` after handing their
  // completion over (before they could sleep); `throws` ones throw there.
  void start(
      const std::function<bool(size_t)>& held, Gate* gate,
      const std::function<bool(size_t)>& throws = [](size_t) { return false; }) {
    for (size_t i = 0; i < kCallers; ++i) {
      threads.emplace_back([this, i, held, gate, throws] {
        const uint64_t before = SyncWake::wakes_made_here();
        try {
          got[i] = wait_for<int>([&](auto done) {
            completions.put(i, std::move(done));
            if (held(i)) gate->pass();
            if (throws(i)) throw std::runtime_error("start failed");
          });
          ++returns[i];
        } catch (const std::runtime_error&) {
          got[i] = -2;
        }
        wakes[i] = SyncWake::wakes_made_here() - before;
      });
    }
  }
  void join() {
    for (auto& t : threads) t.join();
  }
  uint64_t caller_wakes() const {
    uint64_t sum = 0;
    for (uint64_t w : wakes) sum += w;
    return sum;
  }
};

auto none = [](size_t) { return false; };

TEST(SyncWake, ABatchWakesOnlyItsFirstCallerAndEachGetsItsOwnResult) {
  Callers run;
  run.start(none, nullptr);
  auto& dones = run.completions.all();
  const uint64_t before = SyncWake::wakes_made_here();
  {
    WakeBatch batch;
    // Any order: the tree follows the order of completion.
    for (size_t k = kCallers; k-- > 0;) dones[k](static_cast<int>(k) * 10);
    EXPECT_EQ(SyncWake::wakes_made_here(), before);  // nothing woken yet
  }
  EXPECT_LE(SyncWake::wakes_made_here() - before, 1u);
  run.join();
  for (size_t i = 0; i < kCallers; ++i) {
    EXPECT_EQ(run.got[i], static_cast<int>(i) * 10) << i;
    EXPECT_EQ(run.returns[i], 1) << i;
  }
  // One wake per sleeping caller at most, all but the first by callers.
  EXPECT_LE(run.caller_wakes(), kCallers - 1);
}

// Callers 0 (the tree's root) and others, inner nodes among them, were
// completed before they went to sleep: each still wakes its subtree once
// it gets to wait.
TEST(SyncWake, ACallerNotAsleepYetStillWakesTheCallersItLeads) {
  Callers run;
  Gate gate;
  auto held = [](size_t i) { return i % 7 == 0 || i == 1 || i == 2; };
  run.start(held, &gate);
  auto& dones = run.completions.all();
  {
    WakeBatch batch;
    for (size_t i = 0; i < kCallers; ++i) dones[i](static_cast<int>(i) + 1);
  }
  gate.open();
  run.join();
  for (size_t i = 0; i < kCallers; ++i) {
    EXPECT_EQ(run.got[i], static_cast<int>(i) + 1) << i;
    EXPECT_EQ(run.returns[i], 1) << i;
  }
}

// A caller whose start throws after its completion was handed over never
// waits: whoever completes it wakes the callers it leads instead, whether
// that comes before or after it gave up.
TEST(SyncWake, ACallerThatNeverWaitsLeavesNoneAsleep) {
  for (const bool gives_up_first : {true, false}) {
    SCOPED_TRACE(gives_up_first ? "gives up, then completed" : "completed, then gives up");
    Callers run;
    Gate gate;
    const std::function<bool(size_t)> throws = [](size_t i) { return i == 0 || i == 3; };
    // Those that give up first are not held; the others wait at the gate
    // until the batch has ended.
    run.start(gives_up_first ? std::function<bool(size_t)>(none) : throws, &gate, throws);
    auto& dones = run.completions.all();
    if (gives_up_first) {
      // Both gave up once their slot's thread is done with `start`; their
      // threads end right after.
      run.threads[0].join();
      run.threads[3].join();
    }
    {
      WakeBatch batch;
      for (size_t i = 0; i < kCallers; ++i) dones[i](static_cast<int>(i) + 1);
    }
    gate.open();
    for (size_t i = 0; i < kCallers; ++i) {
      if (!(gives_up_first && (i == 0 || i == 3))) run.threads[i].join();
    }
    for (size_t i = 0; i < kCallers; ++i) {
      const bool gave_up = i == 0 || i == 3;
      EXPECT_EQ(run.got[i], gave_up ? -2 : static_cast<int>(i) + 1) << i;
      EXPECT_EQ(run.returns[i], gave_up ? 0 : 1) << i;
    }
  }
}

// Outside a batch a completion wakes its caller at once; a batch opened
// inside another adds to it, and wakes nobody before the outer one ends.
TEST(SyncWake, BatchesNestAndCompletionsOutsideWakeAtOnce) {
  Callers run;
  run.start(none, nullptr);
  auto& dones = run.completions.all();
  dones[0](7);  // no batch: woken now
  run.threads[0].join();
  EXPECT_EQ(run.got[0], 7);
  const uint64_t before = SyncWake::wakes_made_here();
  {
    WakeBatch outer;
    {
      WakeBatch inner;
      for (size_t i = 1; i < kCallers / 2; ++i) dones[i](static_cast<int>(i));
    }
    EXPECT_EQ(SyncWake::wakes_made_here(), before);
    for (size_t i = kCallers / 2; i < kCallers; ++i) dones[i](static_cast<int>(i));
  }
  EXPECT_LE(SyncWake::wakes_made_here() - before, 1u);
  for (size_t i = 1; i < kCallers; ++i) run.threads[i].join();
  for (size_t i = 0; i < kCallers; ++i) EXPECT_EQ(run.got[i], i == 0 ? 7 : static_cast<int>(i));
}

}  // namespace
}  // namespace rl
