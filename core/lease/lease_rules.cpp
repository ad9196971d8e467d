#include "lease_rules.h"

#include <string>

#include "error.h"

namespace rl {

namespace {

// Why an algorithm's slice could not be used late without admitting past
// its limit (docs/algorithms.md, Leases).
const char* why_not(Algorithm a) {
  switch (a) {
    case Algorithm::suppressed:
      return "it admits past the limit by a draw, so a slice has no exact size";
    case Algorithm::fixed_window:
    case Algorithm::sliding_window:
    case Algorithm::sliding_log:
    case Algorithm::gcra:
    case Algorithm::token_bucket: break;
  }
  return nullptr;
}

}  // namespace

void check_lease(const Policy& policy, const Settings& settings) {
  const LeaseConfig& lease = settings.limiter().lease;
  if (!lease.on) {
    for (const char* key : {"lease_ms", "lease_threshold", "lease_share"}) {
      if (settings.has(key)) fail_invalid(std::string(key) + ": applies only with lease=auto");
    }
    return;
  }
  if (const char* why = why_not(policy.algorithm)) {
    fail_invalid(
        std::string("lease: algorithm ") + algorithm_name(policy.algorithm) +
        " cannot lease exactly (" + why +
        "); lease=auto takes fixed_window, sliding_window, sliding_log, gcra or token_bucket");
  }
  if (policy.rates.size() != 1) {
    fail_invalid("lease: lease=auto takes one limit; 'limit' has " +
                 std::to_string(policy.rates.size()));
  }
}

bool lease_holds(const Policy& policy) {
  return lease_releases_used_up(policy) || policy.algorithm == Algorithm::sliding_log;
}

bool lease_releases_used_up(const Policy& policy) {
  return policy.algorithm == Algorithm::gcra || policy.algorithm == Algorithm::token_bucket;
}

int64_t lease_edge_width(const Policy& policy) {
  if (lease_holds(policy)) return 0;
  const Rate& r = policy.rates.front();
  return policy.algorithm == Algorithm::sliding_window ? r.granularity_us : r.window_us;
}

int64_t lease_edge_after(const Policy& policy, const Verdict& granted) {
  const Rate& r = policy.rates.front();
  // fixed_window: reset_after is the window's end. sliding_window: the
  // newest counter is the one the slice went to, so reset_after is its
  // sub-window's end plus the window.
  int64_t left = granted.reset_after_us;
  if (policy.algorithm == Algorithm::sliding_window) left -= r.window_us;
  const int64_t width = lease_edge_width(policy);
  return left > 0 && left <= width ? left : 0;
}

}  // namespace rl
