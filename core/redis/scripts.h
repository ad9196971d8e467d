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
};

const Script& script_for(Algorithm algorithm, Op op);

struct Library {
  std::string_view name;  // rl_<version>: what FUNCTION LOAD answers
  std::string_view code;  // "#!lua name=rl_<version>\n..."
};

const Library& function_library();

// "acquire", "peek", "refund", "reset".
std::string_view op_name(Op op);
// "gcra_acquire": how the library's batch function and RL.BATCH name a call.
std::string_view call_name(Algorithm algorithm, Op op);
// "gcra_acquire_full": how the library's batch function names a call sent
// with all three arguments (now, cost, limits), not its limits alone.
std::string_view full_call_name(Algorithm algorithm, Op op);
// "rl_<version>_gcra_acquire": the call's function in the library (FCALL).
std::string_view function_name(Algorithm algorithm, Op op);

}  // namespace rl::redis
