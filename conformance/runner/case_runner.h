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
std::string run_case(const YAML::Node& case_node, const std::string& store_url);

}  // namespace conformance
