// How a sync caller sleeps until its completion has run (a futex word, no
// spinning), and how a thread that completes many of them at once wakes
// them without one futex wake each.
//
// rl's one I/O thread completes a whole batch of coalesced calls from one
// reply (core/redis/coalescer.cpp): with 64 sync callers in a batch, 64
// FUTEX_WAKEs in a row on that thread were its serial path. Inside a
// WakeBatch the completions only mark their callers; when it ends, the
// thread wakes the first caller alone, and the callers wake one another
// as a binary tree: caller i, once awake, wakes callers 2i+1 and 2i+2
// before it returns. The batch's last caller is awake after about
// log2(n) wake-ups instead of n, each made on a caller's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace rl {

// One sync caller's wake-up: completed once, waited on once.
class SyncWake {
 public:
  SyncWake() = default;
  SyncWake(const SyncWake&) = delete;
  SyncWake& operator=(const SyncWake&) = delete;

  // The completing thread, after it stored the result: marks `wake` done and
  // wakes its caller if asleep; within a WakeBatch on this thread, only
  // joins the batch, which does that when it ends.
  static void complete(std::shared_ptr<SyncWake> wake);

  // The caller: returns once completed (and its batch ended), after it woke
  // the callers it leads in its batch's tree.
  void wait();
  // The caller, instead of wait(), when it will not wait (what would have
  // completed it threw): whoever completes it anyway then wakes the callers
  // it leads, so that none of them is left asleep.
  void abandon();

  // FUTEX_WAKEs this thread has made (tests check who wakes whom).
  static uint64_t wakes_made_here();

 private:
  friend class WakeBatch;
  enum : uint32_t { kEmpty, kSleeping, kDone, kAbandoned };

  // Marks it done; wakes its caller if asleep.
  void release();
  // Releases its children in the tree.
  void release_leads();

  std::atomic<uint32_t> word_{kEmpty};
  // Its children in its batch's tree: set before it is released, released
  // by its caller once awake.
  std::shared_ptr<SyncWake> leads_[2];
};

// While one lives on a thread, SyncWake::complete there defers the wake-ups
// to its end. A batch opened inside another on the same thread adds to the
// outer one. Whatever runs inside must not wait for a sync caller completed
// in the batch (the I/O thread never waits anyway).
class WakeBatch {
 public:
  WakeBatch();
  ~WakeBatch();
  WakeBatch(const WakeBatch&) = delete;
  WakeBatch& operator=(const WakeBatch&) = delete;

 private:
  friend class SyncWake;
  bool outermost_;
  std::vector<std::shared_ptr<SyncWake>> completed_;
};

}  // namespace rl
