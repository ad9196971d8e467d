#include "executor.h"

namespace rl {

bool Executor::post(Task task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    tasks_.push_back(std::move(task));
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  wake_.notify_one();
  return true;
}

void Executor::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and drained
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    const bool shutting_down = stopping_;
    lock.unlock();
    task(shutting_down);
    lock.lock();
  }
}

void Executor::shutdown() {
  std::thread worker;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    worker = std::move(thread_);
  }
  wake_.notify_all();
  if (!worker.joinable()) return;
  if (worker.get_id() == std::this_thread::get_id()) {
    worker.detach();  // called from a task: the loop drains and ends by itself
  } else {
    worker.join();
  }
}

}  // namespace rl
