// Runs one conformance case (conformance/README.md) through the C ABI.
#pragma once

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>

namespace conformance {

// The case itself is malformed (a typo in the YAML, not a failure of rl).
struct BadCase : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `case_node` on a fresh store opened from `store_url` (which already
// carries clock=manual). Returns "" when it passed, otherwise what differed.
// Throws BadCase when the case does not follow the format.
// `alternate_url` (optional, the same prefix as store_url): a second store on
// the same keys; decisions alternate between the two call by call (rl's Redis
// module and its Lua code, docs/redis-module.md). Not for suppressed cases,
// whose draws each limiter makes in its own sequence.
std::string run_case(const YAML::Node& case_node, const std::string& store_url,
                     const std::string& alternate_url = "");

}  // namespace conformance
