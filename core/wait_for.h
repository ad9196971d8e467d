// The sync form of an async operation: start it with a completion, then
// sleep (no spinning) until that completion has run once.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>

namespace rl {

// `start` receives a callable taking a T&&; what it is called with is
// returned. If `start` throws, nothing waits and the exception passes on.
template <class T, class Start>
T wait_for(Start&& start) {
  std::mutex mutex;
  std::condition_variable finished;
  std::optional<T> result;
  start([&](T&& value) {
    std::lock_guard lock(mutex);
    result = std::move(value);
    finished.notify_one();
  });
  std::unique_lock lock(mutex);
  finished.wait(lock, [&] { return result.has_value(); });
  return std::move(*result);
}

}  // namespace rl
