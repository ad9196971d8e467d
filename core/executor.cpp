#include "executor.h"

#include "thread_name.h"

namespace rl {

void Executor::start_locked(const std::shared_ptr<State>& state) {
  if (!state->thread.joinable() && state->thread_id == std::thread::id()) {
    state->thread = std::thread([state] {
      name_this_thread("rl-exec");
      loop(*state);
    });
    state->thread_id = state->thread.get_id();
  }
}

bool Executor::post(Task task) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) return false;
    state_->tasks.push_back(std::move(task));
    start_locked(state_);
  }
  state_->wake.notify_one();
  return true;
}

bool Executor::post_after(std::chrono::microseconds delay, Task task) {
  // Far-future waits are capped (a century) so that the sum cannot overflow.
  const auto capped = std::min(delay, std::chrono::microseconds(std::chrono::hours(24 * 36525)));
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) return false;
    state_->timers.emplace(std::chrono::steady_clock::now() + capped, std::move(task));
    start_locked(state_);
  }
  state_->wake.notify_one();
  return true;
}

void Executor::loop(State& state) {
  std::unique_lock lock(state.mutex);
  while (true) {
    // Due timers (all of them when stopping) join the queue.
    if (!state.timers.empty()) {
      const TimePoint now = std::chrono::steady_clock::now();
      while (!state.timers.empty() && (state.stopping || state.timers.begin()->first <= now)) {
        state.tasks.push_back(std::move(state.timers.begin()->second));
        state.timers.erase(state.timers.begin());
      }
    }
    if (state.tasks.empty()) {
      if (state.stopping) return;  // drained
      if (state.timers.empty()) {
        state.wake.wait(lock);
      } else {
        state.wake.wait_until(lock, state.timers.begin()->first);
      }
      continue;
    }
    Task task = std::move(state.tasks.front());
    state.tasks.pop_front();
    const bool shutting_down = state.stopping;
    lock.unlock();
    task(shutting_down);
    task = nullptr;  // its captures are released outside the lock
    lock.lock();
  }
}

void Executor::shutdown() {
  std::thread worker;
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    worker = std::move(state_->thread);
  }
  state_->wake.notify_all();
  if (!worker.joinable()) return;
  if (worker.get_id() == std::this_thread::get_id()) {
    worker.detach();  // called from a task: the loop drains and ends by itself
  } else {
    worker.join();
  }
}

bool Executor::on_own_thread() const {
  std::lock_guard lock(state_->mutex);
  return state_->thread_id == std::this_thread::get_id();
}

}  // namespace rl
