// Key schema v1 (docs/key-schema.md):
//   <prefix>:<limiter-name>:{<escaped user key>}:v1:<algorithm>:<limits>
// The user key is percent-escaped so that it holds no brace: the hash tag is
// exactly the escaped key, and distinct user keys give distinct Redis keys.
#pragma once

#include <string>
#include <string_view>

#include "../policy.h"

namespace rl::redis {

inline constexpr int kKeySchemaVersion = 1;

// '%', '{', '}' and every byte outside '!'..'~' become %XX (upper-case hex).
std::string escape_key(std::string_view user_key);

// What follows the hash tag: schema version, algorithm and every limit's
// parameters, so that differently configured limiters never share state.
std::string key_suffix(const Policy& policy);

// "<prefix>:<name>:{" and "}:<suffix>": a key is head + escape_key(k) + tail.
struct KeyShape {
  std::string head;
  std::string tail;
  std::string key_for(std::string_view user_key) const {
    return head + escape_key(user_key) + tail;
  }
};
KeyShape key_shape(std::string_view prefix, const Policy& policy);

}  // namespace rl::redis
