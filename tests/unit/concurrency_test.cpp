// Many threads through the C ABI on the memory store. The manual clock
// stands still, so the number of admitted requests is exact.
#include <atomic>
#include <thread>

#include "capi_helpers.h"

namespace {

constexpr int kThreads = 8;
constexpr int kAttemptsPerThread = 500;

class OneKeyConcurrency : public ::testing::TestWithParam<const char*> {};

TEST_P(OneKeyConcurrency, EightThreadsOnOneKeyAdmitExactlyTheLimit) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"algorithm", GetParam()}, {"limit", "1000/1h"}});
  std::atomic<int> admitted{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      const std::string key = "shared";
      const rl_request req = rl_test::request(key, 1);
      for (int i = 0; i < kAttemptsPerThread; ++i) {
        rl_decision d = rl_test::blank_decision();
        if (rl_limiter_acquire(lim.get(), &req, &d, nullptr) != RL_OK) failed++;
        admitted += d.allowed;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(admitted.load(), 1000);  // of 4000 attempts
  EXPECT_EQ(rl_test::peek(lim.get(), "shared", 0).remaining, 0);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, OneKeyConcurrency,
                         ::testing::Values("gcra", "token_bucket", "sliding_log", "sliding_window",
                                           "fixed_window"),
                         [](const auto& info) { return std::string(info.param); });

TEST(DistinctKeysConcurrency, EachOfEightThreadsGetsExactlyItsOwnLimit) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "100/1h"}});
  std::atomic<int> admitted_per_thread[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "thread-" + std::to_string(t);
      const rl_request req = rl_test::request(key, 1);
      for (int i = 0; i < kAttemptsPerThread; ++i) {
        rl_decision d = rl_test::blank_decision();
        ASSERT_EQ(rl_limiter_acquire(lim.get(), &req, &d, nullptr), RL_OK);
        admitted_per_thread[t] += d.allowed;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(admitted_per_thread[t].load(), 100) << "thread " << t;
}

TEST(OneKeyConcurrencyWithTime, EightThreadsAdmitExactlyWhatTheClockRefills) {
  // gcra 10/s: the burst of 10, then one unit per 100 ms the clock moves. The
  // clock moves only once the threads have taken every unit, so none is lost.
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  std::atomic<bool> done{false};
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      const std::string key = "hot";
      const rl_request req = rl_test::request(key, 1);
      while (!done) {
        rl_decision d = rl_test::blank_decision();
        rl_limiter_acquire(lim.get(), &req, &d, nullptr);
        admitted += d.allowed;
      }
    });
  }
  const auto drained = [&] {
    while (rl_test::peek(lim.get(), "hot", 0).remaining > 0) std::this_thread::yield();
  };
  drained();
  for (int step = 0; step < 100; ++step) {
    rl_test::advance(store.get(), 100000);
    drained();
  }
  done = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(admitted.load(), 10 + 100);
}

}  // namespace
