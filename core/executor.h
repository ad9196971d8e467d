// One thread that runs queued tasks in order, and timed tasks when they are
// due: the "thread owned by rl" on which the memory store completes
// asynchronous calls, and on which every store's acquire_wait sleeps (a
// waiting call is an entry in a timer queue, never a blocked thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
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
  // Runs task once `delay` has passed (steady clock), after the tasks
  // queued when it fell due. False (dropped) once shutdown has begun.
  bool post_after(std::chrono::microseconds delay, Task task);
  // Runs every queued and timed task with shutting_down = true, then stops
  // the thread. Idempotent; from the executor's own thread it does not
  // wait for itself.
  void shutdown();
  // True on the executor's thread (a sync wait there would wait for itself).
  bool on_own_thread() const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  // Shared with the thread: a task may drop the last reference to the
  // executor's owner, and the loop must not touch a destroyed executor then.
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Task> tasks;
    std::multimap<TimePoint, Task> timers;  // by due time; equal times in post order
    bool stopping = false;
    std::thread thread;  // started by the first post
    std::thread::id thread_id;
  };
  static void start_locked(const std::shared_ptr<State>& state);
  static void loop(State& state);

  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace rl
