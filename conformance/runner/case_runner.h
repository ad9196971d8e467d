// Runs one conformance case (conformance/README.md) through the C ABI.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "schema.h"

namespace conformance {

// Checks `case_node` against `schema` (filling in its defaults), then runs it
// on a fresh store opened from `store_url` (which already carries
// clock=manual). Returns "" when it passed, otherwise what differed.
// Throws BadCase when the case does not follow the format.
// `alternate_url` (optional, the same prefix as store_url): a second store on
// the same keys; decisions alternate between the two call by call (rl's Redis
// module and its Lua code, docs/redis-module.md). Not for suppressed cases,
// whose draws each limiter makes in its own sequence.
std::string run_case(const Schema& schema, const YAML::Node& case_node,
                     const std::string& store_url, const std::string& alternate_url = "");

}  // namespace conformance
