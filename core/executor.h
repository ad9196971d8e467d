// One thread that runs queued tasks in order: the "thread owned by rl" on
// which the memory store completes asynchronous calls.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace rl {

class Executor {
 public:
  // A task learns whether it runs normally or is being drained by shutdown.
  using Task = std::function<void(bool shutting_down)>;

  Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  ~Executor() { shutdown(); }

  // False (and the task is dropped, never run) once shutdown has begun.
  bool post(Task task);
  // Runs every queued task with shutting_down = true, then stops the thread.
  // Idempotent; from the executor's own thread it does not wait for itself.
  void shutdown();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // started by the first post
};

}  // namespace rl
