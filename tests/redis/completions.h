// Counts the completions of async calls, to check each runs exactly once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "limiter.h"

namespace rl::test {

struct Completions {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int> runs;
  std::vector<Code> codes;
  std::vector<std::chrono::steady_clock::time_point> finished_at;

  explicit Completions(size_t n) : runs(n, 0), codes(n, Code::ok), finished_at(n) {}
  Completion for_call(size_t i) {
    return [this, i](Outcome&& o) {
      std::lock_guard lock(mutex);
      ++runs[i];
      codes[i] = o.code;
      finished_at[i] = std::chrono::steady_clock::now();
      changed.notify_all();
    };
  }
  size_t finished() {
    size_t n = 0;
    for (int r : runs) n += r > 0 ? 1 : 0;
    return n;
  }
  bool wait_all(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [&] { return finished() == runs.size(); });
  }
};

}  // namespace rl::test
