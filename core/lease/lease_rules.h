// Which policies may lease, and where a lease must end: the exactness
// argument of docs/algorithms.md (Leases) in code.
#pragma once

#include <cstdint>

#include "config/policy.h"
#include "config/settings.h"
#include "verdict.h"

namespace rl {

// Throws invalid_arg naming the setting when `lease` is on for a policy
// that cannot lease exactly (suppressed, or more than one limit), or when a
// lease_* setting is given with lease=off.
void check_lease(const Policy& policy, const Settings& settings);

// gcra, token_bucket and sliding_log: the store holds a slice's units for
// the lease's length (no window edges): the buckets out of the bucket, the
// log as a record stamped at the lease's end.
bool lease_holds(const Policy& policy);

// gcra and token_bucket: every slice is released, used up or not, to end
// its hold early (a log's record of used units stays as it is).
bool lease_releases_used_up(const Policy& policy);

// The width of the intervals whose edges a lease never crosses: the window
// (fixed_window) or the sub-window (sliding_window), where counts land; 0
// for the algorithms that hold.
int64_t lease_edge_width(const Policy& policy);

// From the store's verdict on a slice it just admitted: how long after the
// store decided the window (or sub-window) the slice was counted in ends;
// 0 when the verdict does not say (the slice is then not used here). Not
// for the algorithms that hold: their lease lasts lease_ms.
int64_t lease_edge_after(const Policy& policy, const Verdict& granted);

}  // namespace rl
