// The sync form of an async operation: start it with a completion, then
// sleep (no spinning) until that completion has run once.
#pragma once

#include <array>
#include <memory>
#include <optional>

#include "sync_wake.h"

namespace rl {
namespace detail {

// Storage for this thread's next sync call, one that nobody else holds.
// Two per thread: the last call's may still be held for a while (by the
// batch that completed it) when the next one starts.
template <class Slot>
std::shared_ptr<Slot> free_slot() {
  thread_local std::array<std::shared_ptr<Slot>, 2> slots;
  thread_local size_t replaced = 0;
  for (const std::shared_ptr<Slot>& s : slots) {
    // The copy returned increments the count (acq_rel): what the last
    // holders did to it, before they let go on their threads, happens
    // before its reuse here.
    if (s && s.use_count() == 1) return s;
  }
  std::shared_ptr<Slot>& s = slots[replaced++ % slots.size()];
  s = std::make_shared<Slot>();
  return s;
}

}  // namespace detail

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
// the wake-up is done. A thread keeps its states' storage and reuses one
// once nobody else holds it: a sync call then allocates no state.
template <class T, class Start>
T wait_for(Start&& start) {
  struct State : SyncWake {
    std::optional<T> result;
  };
  struct Slot {
    std::optional<State> state;
  };
  std::shared_ptr<Slot> slot = detail::free_slot<Slot>();
  State* fresh = &slot->state.emplace();
  const std::shared_ptr<State> state(std::move(slot), fresh);  // shares the slot's count
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
