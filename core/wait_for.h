// The sync form of an async operation: start it with a completion, then
// sleep (no spinning) until that completion has run once.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

namespace rl {

// `start` receives a callable taking a T&&; what it is called with is
// returned. If `start` throws, nothing waits and the exception passes on.
//
// A futex word instead of a mutex and condition variable: a sync call costs
// its caller one FUTEX_WAIT and the completing thread one FUTEX_WAKE (none
// when the caller has not gone to sleep yet). With glibc's condition
// variable the caller, once woken, takes the mutex back marked contended,
// so its unlock is one more futex call; and the completing thread (rl's
// I/O thread, which wakes every sync caller in turn) must not hold a lock
// the woken caller needs. The state is shared with the completion so that
// it stays alive until the wake-up is done.
template <class T, class Start>
T wait_for(Start&& start) {
  enum : uint32_t { kEmpty, kSleeping, kDone };
  struct State {
    std::atomic<uint32_t> word{kEmpty};
    std::optional<T> result;
  };
  auto state = std::make_shared<State>();
  start([state](T&& value) {
    state->result = std::move(value);
    if (state->word.exchange(kDone, std::memory_order_acq_rel) == kSleeping)
      ::syscall(SYS_futex, &state->word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  });
  uint32_t seen = state->word.load(std::memory_order_acquire);
  while (seen != kDone) {
    if (seen == kEmpty &&
        !state->word.compare_exchange_strong(seen, kSleeping, std::memory_order_acq_rel))
      continue;  // done meanwhile: `seen` is kDone now
    // Sleeps only while the word is still kSleeping; wakes spuriously or on
    // EINTR too, hence the loop.
    ::syscall(SYS_futex, &state->word, FUTEX_WAIT_PRIVATE, kSleeping, nullptr, nullptr, 0);
    seen = state->word.load(std::memory_order_acquire);
  }
  return std::move(*state->result);
}

}  // namespace rl
