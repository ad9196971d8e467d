// One acquire_wait in progress: an acquire in flight, or a timer before the
// next one. Its caller may give up on it (cancel): the wait then ends, and
// units it was admitted for go back to the key, once. Every binding's
// cancellation (an AbortSignal, a Go context, a Python task, a Java future)
// comes here, so none of them refunds on its own.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "store.h"

namespace rl {

class Wait : public std::enable_shared_from_this<Wait> {
 public:
  // deadline: the store clock's time past which no attempt starts.
  Wait(std::shared_ptr<Store> store, std::shared_ptr<Backend> backend, Call call, int64_t deadline,
       Completion done);

  // Throws when the first attempt cannot start (closed store).
  void start();

  // The caller gave up: no attempt starts after this, a timer still pending
  // ends the wait now (its completion brings the last denial), and an
  // admission, whether it already reached the completion or arrives later,
  // is refunded exactly once. Any thread, any number of times; never runs
  // the completion inside this call.
  void cancel();

 private:
  enum class State { attempting, sleeping, ended };

  void attempt(Call call);
  void retry();
  void decided(Outcome&& o);
  // A timer ran out (or a cancel woke the wait): retry, or end.
  void woken(bool shutting_down);
  // Gives the admitted units back, then runs `then` (on a store thread).
  void refund(std::function<void()> then);

  std::shared_ptr<Store> store_;
  std::shared_ptr<Backend> backend_;
  const Call call_;
  const int64_t deadline_;
  Completion done_;

  std::mutex mutex_;
  State state_ = State::attempting;
  bool cancelled_ = false;
  // The wait ended on an admission, and whether its units went back.
  bool admitted_ = false;
  bool refunded_ = false;
  // What a sleeping wait ends on when cancelled.
  Outcome last_denial_;
};

}  // namespace rl
