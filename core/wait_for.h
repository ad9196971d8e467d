// The sync form of an async operation: start it with a completion, then
// sleep (no spinning) until that completion has run once.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

namespace rl {

// `start` receives a callable taking a T&&; what it is called with is
// returned. If `start` throws, nothing waits and the exception passes on.
template <class T, class Start>
T wait_for(Start&& start) {
  // Shared with the completion, so that it can wake the waiter after
  // unlocking: a waiter woken while the mutex is still held would at once
  // sleep again on the mutex (two more futex calls and a context switch per
  // sync call, which 64 callers on a few cores pay in full).
  struct State {
    std::mutex mutex;
    std::condition_variable finished;
    std::optional<T> result;
  };
  auto state = std::make_shared<State>();
  start([state](T&& value) {
    {
      std::lock_guard lock(state->mutex);
      state->result = std::move(value);
    }
    state->finished.notify_one();
  });
  std::unique_lock lock(state->mutex);
  state->finished.wait(lock, [&] { return state->result.has_value(); });
  return std::move(*state->result);
}

}  // namespace rl
