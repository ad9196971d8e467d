// The Lua code of lua/, embedded at build time (core/CMakeLists.txt
// assembles it): one script per algorithm and operation with its SHA1, for
// EVALSHA; and one Redis Functions library holding them all, for FCALL.
#pragma once

#include <string_view>

#include "algorithms/decide.h"
#include "config/policy.h"

namespace rl::redis {

struct Script {
  std::string_view sha1;  // 40 hex digits, as Redis's SCRIPT LOAD answers
  std::string_view body;
  std::string_view function;  // its name in the library: rl_<version>_<algorithm>_<op>
};

const Script& script_for(Algorithm algorithm, Op op);

struct Library {
  std::string_view name;  // rl_<version>: what FUNCTION LOAD answers
  std::string_view code;  // "#!lua name=rl_<version>\n..."
};

const Library& function_library();

}  // namespace rl::redis
