// The units leases' slices hold out of a gcra or token_bucket key
// (docs/algorithms.md, Leases). A slice's units are taken from the bucket
// when it is granted, but a process may use them up to its lease's end,
// beside units that refilled meanwhile; so while a slice may still be used
// the bucket refills only up to its capacity minus the units slices hold.
// Holds expire by generations of `period_us` (the lease's length): a slice
// granted in generation g is used no later than (g + 2) * period_us, so two
// generations are kept and an older one is dropped, even when its releases
// never come (a process that died).
//
// The capacity a generation takes is `units` until it expires, and after it
// rises at the refill rate (the bucket at its lowered capacity refills from
// the moment the hold ends): as a floor in scaled units (one unit of cost is
// window_reduced of them, the bucket refills limit_reduced of them per us),
// max(0, units * window_reduced - max(0, now - expiry) * limit_reduced).
#pragma once

#include <memory>

#include "config/rate.h"
#include "wide.h"

namespace rl {

struct LeaseHold {
  // The store time of the first lease of the state (or of the first after
  // every hold had expired): a release of a slice granted before it is
  // one the state no longer holds (a reset, or a hold that expired).
  int64_t leased_at = 0;
  int64_t period_us = 0;
  int64_t gen = 0;       // generation of held_new: floor(grant time / period_us)
  int64_t held_new = 0;  // units of slices granted in generation gen
  int64_t held_old = 0;  // units of slices granted in generation gen - 1

  // The scaled units the holds take out of the capacity at `now`.
  int128 floor_at(const Rate& r, int64_t now) const;
  // The least d >= 0 such that floor_at(now + d) <= target.
  int64_t wait_for_floor(const Rate& r, int64_t now, int128 target) const;
  // From then on the holds take nothing.
  int64_t idle_at(const Rate& r) const;
  // Whether a slice may still be using any hold at `now`.
  bool live(int64_t now) const;
  // Whether a grant held for `hold_us` fits: holds still live expire by a
  // period that must cover it.
  bool accepts(int64_t now, int64_t hold_us) const;
  // After the grant's units were taken from the bucket.
  void hold(int64_t now, int64_t units, int64_t hold_us);
  // A release of the slice of `slice` units granted at `granted_at`: true,
  // with its hold taken off, when the state still holds it.
  bool release(int64_t now, int64_t granted_at, int64_t slice);
};

// A state's holds: none (nullptr) on a key never leased, so an ordinary
// state stays as small as before (memory:// keeps states inline).
class HeldUnits {
 public:
  HeldUnits() = default;
  HeldUnits(const HeldUnits& o) : p_(o.p_ ? std::make_unique<LeaseHold>(*o.p_) : nullptr) {}
  HeldUnits& operator=(const HeldUnits& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<LeaseHold>(*o.p_) : nullptr;
    return *this;
  }
  HeldUnits(HeldUnits&&) noexcept = default;
  HeldUnits& operator=(HeldUnits&&) noexcept = default;

  explicit operator bool() const { return p_ != nullptr; }
  const LeaseHold* operator->() const { return p_.get(); }
  LeaseHold* operator->() { return p_.get(); }
  const LeaseHold& operator*() const { return *p_; }
  LeaseHold& make() {
    if (!p_) p_ = std::make_unique<LeaseHold>();
    return *p_;
  }
  // The floor at `now` (0 with no holds).
  int128 floor_at(const Rate& r, int64_t now) const { return p_ ? p_->floor_at(r, now) : 0; }
  // The algorithms' lease steps that do not touch the bucket (gcra,
  // token_bucket): whether a grant held `hold_us` fits, its hold after the
  // grant's consume, and, after a write, dropping holds no slice can use
  // whose floor is gone (the state is an ordinary one again).
  bool accepts(int64_t now, int64_t hold_us) const {
    return p_ ? p_->accepts(now, hold_us) : hold_us > 0;
  }
  void hold(int64_t now, int64_t units, int64_t hold_us) { make().hold(now, units, hold_us); }
  void settle(const Rate& r, int64_t now) {
    if (p_ && !p_->live(now) && p_->idle_at(r) <= now) p_.reset();
  }

 private:
  std::unique_ptr<LeaseHold> p_;
};

}  // namespace rl
