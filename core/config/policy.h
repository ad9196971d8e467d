// A limiter's policy: algorithm, limits and namespace, validated as a whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "failover/failure_policy.h"
#include "rate.h"
#include "settings.h"

namespace rl {

enum class Algorithm { gcra, token_bucket, sliding_log, sliding_window, fixed_window };

Algorithm parse_algorithm(std::string_view text);
const char* algorithm_name(Algorithm a);

// Names and prefixes: 1-64 bytes of [A-Za-z0-9_.-] (they are part of every
// Redis key, outside the hash tag, so they may hold no brace or colon).
void check_name(std::string_view what, std::string_view value);

// "20" or "20, 5000": one burst per limit.
std::vector<int64_t> parse_bursts(std::string_view text);

struct Policy {
  Algorithm algorithm = Algorithm::gcra;
  std::vector<Rate> rates;
  std::string name = "default";
  // What to do when the store has an outage; not part of identity().
  FailurePolicy failure;
  // Identifies the state this policy reads and writes: two limiters with the
  // same identity share their keys' state.
  std::string identity() const;

  // Throws invalid_arg naming the first bad or conflicting setting.
  static Policy from(const Settings& settings);
};

}  // namespace rl
