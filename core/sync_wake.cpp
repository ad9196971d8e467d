#include "sync_wake.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

namespace rl {
namespace {

thread_local WakeBatch* t_batch = nullptr;
thread_local uint64_t t_wakes = 0;

}  // namespace

void SyncWake::complete(std::shared_ptr<SyncWake> wake) {
  if (t_batch != nullptr) return t_batch->completed_.push_back(std::move(wake));
  wake->release();
}

void SyncWake::release() {
  // Once kDone is seen the caller may return at once: the word is kept
  // alive by the shared_ptr of whoever releases it.
  const uint32_t was = word_.exchange(kDone, std::memory_order_acq_rel);
  if (was == kSleeping) {
    ++t_wakes;
    ::syscall(SYS_futex, &word_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  } else if (was == kAbandoned) {
    release_leads();  // nobody else will
  }
}

void SyncWake::release_leads() {
  for (std::shared_ptr<SyncWake>& next : leads_) {
    if (next) std::exchange(next, nullptr)->release();
  }
}

void SyncWake::wait() {
  uint32_t seen = word_.load(std::memory_order_acquire);
  while (seen != kDone) {
    if (seen == kEmpty &&
        !word_.compare_exchange_strong(seen, kSleeping, std::memory_order_acq_rel))
      continue;  // done meanwhile: `seen` is kDone now
    // Sleeps only while the word is still kSleeping; wakes spuriously or on
    // EINTR too, hence the loop.
    ::syscall(SYS_futex, &word_, FUTEX_WAIT_PRIVATE, kSleeping, nullptr, nullptr, 0);
    seen = word_.load(std::memory_order_acquire);
  }
  // Its batch's tree goes on from here, before this caller does anything
  // else.
  release_leads();
}

void SyncWake::abandon() {
  // Already released: its children are this caller's to wake.
  if (word_.exchange(kAbandoned, std::memory_order_acq_rel) == kDone) release_leads();
}

uint64_t SyncWake::wakes_made_here() {
  return t_wakes;
}

WakeBatch::WakeBatch() : outermost_(t_batch == nullptr) {
  if (outermost_) t_batch = this;
}

WakeBatch::~WakeBatch() {
  if (!outermost_) return;
  t_batch = nullptr;
  const size_t n = completed_.size();
  if (n == 0) return;
  // The tree is complete before its root is released: a caller reads its
  // children only after it saw kDone, which the release chain orders after
  // these writes.
  for (size_t i = 0; 2 * i + 1 < n; ++i) {
    completed_[i]->leads_[0] = completed_[2 * i + 1];
    if (2 * i + 2 < n) completed_[i]->leads_[1] = completed_[2 * i + 2];
  }
  completed_[0]->release();
}

}  // namespace rl
