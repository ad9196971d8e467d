// Key schema (docs/key-schema.md):
//   <prefix>:<limiter-name>:{<escaped user key>}:v<n>:<algorithm>:<limits>
// with n = 2 for sliding_log (a list of packed entries), 3 for gcra and
// fixed_window (one number when one limit allows it), 1 for the others.
// The user key is percent-escaped so that it holds no brace: the hash tag is
// exactly the escaped key, and distinct user keys give distinct Redis keys.
#pragma once

#include <string>
#include <string_view>

#include "config/policy.h"

namespace rl::redis {

// The version of an algorithm's layout: a new layout gets a new version, so
// it never reads a key of the old one.
constexpr int key_schema_version(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::sliding_log: return 2;
    case Algorithm::gcra:
    case Algorithm::fixed_window: return 3;
    default: return 1;
  }
}

// '%', '{', '}' and every byte outside '!'..'~' become %XX (upper-case hex).
std::string escape_key(std::string_view user_key);

// What follows the hash tag: schema version, algorithm and every limit's
// parameters, so that differently configured limiters never share state.
std::string key_suffix(const Policy& policy);

// "<prefix>:<name>:{" and "}:<suffix>": a key is head + escape_key(k) + tail.
struct KeyShape {
  std::string head;
  std::string tail;
  // Built in one allocation: it is on every decision's path.
  std::string key_for(std::string_view user_key) const;
};
KeyShape key_shape(std::string_view prefix, const Policy& policy);

}  // namespace rl::redis
