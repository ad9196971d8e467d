// The Lua scripts of lua/, embedded at build time with their SHA1 (one per
// algorithm and operation; core/CMakeLists.txt assembles them).
#pragma once

#include <string_view>

#include "algorithms/decide.h"
#include "config/policy.h"

namespace rl::redis {

struct Script {
  std::string_view sha1;  // 40 hex digits, as Redis's SCRIPT LOAD answers
  std::string_view body;
};

const Script& script_for(Algorithm algorithm, Op op);

}  // namespace rl::redis
