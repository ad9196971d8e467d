// The sync form of an async operation: start it with a completion, then
// sleep (no spinning) until that completion has run once.
#pragma once

#include <memory>
#include <optional>

#include "sync_wake.h"

namespace rl {

// `start` receives a callable taking a T&&; what it is called with is
// returned. If `start` throws, nothing waits and the exception passes on.
//
// The caller sleeps on a futex word (SyncWake) instead of a mutex and
// condition variable: a sync call costs its caller one FUTEX_WAIT and the
// completing thread at most one FUTEX_WAKE (none when the caller has not
// gone to sleep yet, and within a WakeBatch one per batch). With glibc's
// condition variable the caller, once woken, takes the mutex back marked
// contended, so its unlock is one more futex call; and the completing
// thread (rl's I/O thread) must not hold a lock the woken caller needs.
// The state is shared with the completion so that it stays alive until
// the wake-up is done.
template <class T, class Start>
T wait_for(Start&& start) {
  struct State : SyncWake {
    std::optional<T> result;
  };
  auto state = std::make_shared<State>();
  try {
    start([state](T&& value) {
      state->result = std::move(value);
      SyncWake::complete(state);
    });
  } catch (...) {
    state->abandon();
    throw;
  }
  state->wait();
  return std::move(*state->result);
}

}  // namespace rl
