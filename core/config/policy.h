// A limiter's policy: algorithm, limits and namespace, validated as a whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithm.h"
#include "failover/failure_policy.h"
#include "rate.h"
#include "settings.h"

namespace rl {

// Names and prefixes: 1-64 bytes of [A-Za-z0-9_.-] (they are part of every
// Redis key, outside the hash tag, so they may hold no brace or colon).
void check_name(std::string_view what, std::string_view value);

// "20" or "20, 5000": one burst per limit.
std::vector<int64_t> parse_bursts(std::string_view text);

// suppressed's hard_limit_factor, "1" to "1000" with up to 3 decimals
// ("1.5"), in thousandths: exact, so the hard limit is an exact integer.
int64_t parse_hard_limit_factor_milli(std::string_view text);

// Longest factor_reuse: one hour.
inline constexpr int64_t kMaxFactorReuseUs = int64_t{3600} * 1000000;

// suppressed's factor_reuse: a duration up to kMaxFactorReuseUs.
int64_t parse_factor_reuse(std::string_view text, std::string_view what);

struct Policy {
  Algorithm algorithm = Algorithm::gcra;
  std::vector<Rate> rates;
  std::string name;
  // What to do when the store has an outage; not part of identity().
  FailurePolicy failure;
  // suppressed: how long a computed suppression factor is reused, and the
  // seed of the limiter's draws (unset: 0 under a manual clock, else
  // random). Neither is part of identity(): they change no stored state.
  int64_t factor_reuse_us = 0;
  std::optional<uint64_t> seed;
  // Identifies the state this policy reads and writes: two limiters with the
  // same identity share their keys' state.
  std::string identity() const;

  // From the settings' parsed values (Settings::limiter()); throws
  // invalid_arg naming the first missing or conflicting setting.
  static Policy from(const Settings& settings);
};

}  // namespace rl
