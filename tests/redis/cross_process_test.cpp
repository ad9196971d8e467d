// Cross-process exactness: 4 processes x 4 threads share one limit on one
// key through one Redis: a single server, its master through Sentinel, and
// the cluster (plain and TLS). Real time with a window longer than the run (the
// total is the limit), and the manual clock over several windows, set to
// the same value in every process between barriers (the total is what the
// memory store admits for the same phases).
#include <sys/wait.h>

#include <thread>
#include <tuple>

#include "redis_env.h"

namespace rl::test {
namespace {

constexpr int kProcesses = 4;
constexpr int kThreads = 4;
constexpr int64_t kWindowUs = 1'000'000;
constexpr int64_t kStartUs = 1'000'000'000'000;

struct Scenario {
  std::string topology;  // redis_env.h topology_url
  std::string algorithm;
  std::string limit;
  bool manual = false;
  int phases = 1;     // manual: the clock is start + phase * window
  int attempts = 40;  // per thread and phase
};

// Per thread: `attempts` sequential acquires; returns how many were admitted.
int64_t hammer(Limiter& limiter, int attempts) {
  std::atomic<int64_t> admitted{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < attempts; ++i) {
        const Outcome o = limiter.run(Op::acquire, "shared", 1);
        if (o.code != Code::ok) ++errors;
        if (o.verdict.allowed) ++admitted;
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors > 0 ? -1 : admitted.load();
}

void write_all(int fd, const void* data, size_t n) {
  if (write(fd, data, n) != static_cast<ssize_t>(n)) _exit(3);
}
void read_all(int fd, void* data, size_t n) {
  if (read(fd, data, n) != static_cast<ssize_t>(n)) _exit(4);
}

// One process: opens its own store, then for each phase sets its clock,
// hammers, reports, and waits for the parent's go. Never returns.
[[noreturn]] void child(const Scenario& run, const std::string& url, int to_parent,
                        int from_parent) {
  int64_t total = 0;
  try {
    auto store = open_store(url, {});
    Limiter limiter(store, limiter_settings(run.algorithm, run.limit, "shared"));
    for (int phase = 0; phase < run.phases; ++phase) {
      if (run.manual) manual_clock(*store).set(kStartUs + phase * kWindowUs);
      const int64_t admitted = hammer(limiter, run.attempts);
      if (admitted < 0) _exit(2);
      total += admitted;
      char ready = 'r';
      write_all(to_parent, &ready, 1);
      read_all(from_parent, &ready, 1);
    }
    store->close();
  } catch (...) {
    _exit(5);
  }
  write_all(to_parent, &total, sizeof total);
  _exit(0);
}

int64_t run_processes(const Scenario& run) {
  const std::string url = topology_url(run.topology, run.manual ? "clock=manual" : "");
  struct Child {
    pid_t pid;
    int from_child;
    int to_child;
  };
  std::vector<Child> children;
  for (int p = 0; p < kProcesses; ++p) {
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid == 0) {
      close(up[0]);
      close(down[1]);
      child(run, url, up[1], down[0]);
    }
    close(up[1]);
    close(down[0]);
    children.push_back({pid, up[0], down[1]});
  }
  // Barrier per phase: every process finished it before any starts the next.
  for (int phase = 0; phase < run.phases; ++phase) {
    char c;
    for (Child& ch : children) read_all(ch.from_child, &c, 1);
    for (Child& ch : children) write_all(ch.to_child, &c, 1);
  }
  int64_t total = 0;
  for (Child& ch : children) {
    int64_t admitted = 0;
    read_all(ch.from_child, &admitted, sizeof admitted);
    total += admitted;
    int status = 0;
    waitpid(ch.pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "a worker process failed: " << status;
    close(ch.from_child);
    close(ch.to_child);
  }
  return total;
}

// What one process admits on the memory store for the same phases.
int64_t expected_total(const Scenario& run) {
  auto store = open_store("memory://?clock=manual", {});
  Limiter limiter(store, limiter_settings(run.algorithm, run.limit, "shared"));
  int64_t total = 0;
  for (int phase = 0; phase < run.phases; ++phase) {
    manual_clock(*store).set(kStartUs + phase * kWindowUs);
    for (int i = 0; i < kProcesses * kThreads * run.attempts; ++i) {
      total += limiter.run(Op::acquire, "shared", 1).verdict.allowed ? 1 : 0;
    }
  }
  return total;
}

using TopologyAndAlgorithm = std::tuple<const char*, const char*>;

std::string test_name(const ::testing::TestParamInfo<TopologyAndAlgorithm>& info) {
  return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
}

class CrossProcess : public ::testing::TestWithParam<TopologyAndAlgorithm> {};

TEST_P(CrossProcess, ManualClockOverSeveralWindowsAdmitsExactlyTheExpectedTotal) {
  const Scenario run{std::get<0>(GetParam()), std::get<1>(GetParam()), "50/s", true, 3, 10};
  const int64_t expected = expected_total(run);
  EXPECT_EQ(run_processes(run), expected);
  if (run.algorithm == "sliding_window") {
    // Its documented bound: never more than the limit per window.
    EXPECT_LE(expected, 50 * run.phases);
    EXPECT_GE(expected, 50);
  } else {
    EXPECT_EQ(expected, 50 * run.phases);
  }
}

INSTANTIATE_TEST_SUITE_P(Topologies, CrossProcess,
                         ::testing::Combine(::testing::ValuesIn(kTopologies),
                                            ::testing::ValuesIn(kAlgorithms)),
                         test_name);

class CrossProcessRealTime : public ::testing::TestWithParam<TopologyAndAlgorithm> {};

TEST_P(CrossProcessRealTime, AWindowLongerThanTheRunAdmitsExactlyTheLimit) {
  // 640 attempts
  const Scenario run{std::get<0>(GetParam()), std::get<1>(GetParam()), "200/1d", false, 1, 40};
  EXPECT_EQ(run_processes(run), 200);
}

INSTANTIATE_TEST_SUITE_P(Topologies, CrossProcessRealTime,
                         ::testing::Combine(::testing::ValuesIn(kTopologies),
                                            ::testing::Values("gcra", "token_bucket", "sliding_log",
                                                              "fixed_window")),
                         test_name);

}  // namespace
}  // namespace rl::test
