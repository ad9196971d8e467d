// What a limiter does when its store has an outage (the on_failure and
// local_share limiter settings).
#pragma once

#include <cstdint>
#include <string_view>

namespace rl {

struct Policy;
class Settings;

enum class OnFailure {
  closed,  // the call fails with the store's status (the default)
  open,    // the call is allowed, marked as failed open
  local,   // an in-process limiter with a share of the capacity decides
};

struct FailurePolicy {
  OnFailure on_failure = OnFailure::closed;
  // local_share as a fraction in (0, 1]: each limit and burst of the local
  // limiter is floor(value * numerator / denominator), at least 1.
  int64_t share_numerator = 1;
  int64_t share_denominator = 1;

  // The parsed on_failure and local_share (Settings::limiter()); throws
  // invalid_arg when they conflict.
  static FailurePolicy from(const Settings& settings);
  bool operator==(const FailurePolicy&) const = default;
};

OnFailure parse_on_failure(std::string_view text);
// "1/4", "1" or "0.25": a share in (0, 1]. Throws invalid_arg.
FailurePolicy parse_local_share(std::string_view text);
// The same for any share setting, naming `name` when it is malformed.
FailurePolicy parse_share(std::string_view name, std::string_view text);

// The policy the local fallback decides with: the same algorithm and
// windows, each limit and burst scaled by the share.
Policy local_policy(const Policy& policy);

}  // namespace rl
