#include "scripts.h"

#include <iterator>

#include "error.h"

namespace rl::redis {
namespace {

struct Entry {
  std::string_view algorithm;
  std::string_view op;
  Script script;
};

// Generated: {"gcra", "acquire", {"<sha1>", R"rl_lua(...)rl_lua", "rl_<version>_gcra_acquire"}},
// ...
// const, not constexpr: clang would measure every script at compile time and
// pass its constexpr step limit.
const Entry kScripts[] = {
#include "redis_scripts.inc"
};

std::string_view op_name(Op op) {
  switch (op) {
    case Op::acquire: return "acquire";
    case Op::peek: return "peek";
    case Op::refund: return "refund";
    case Op::reset: return "reset";
  }
  return "?";
}

// Generated: "rl_<version>", R"rl_lua(#!lua name=rl_<version>...)rl_lua"
const Library kLibrary{
#include "redis_library.inc"
};

}  // namespace

const Library& function_library() {
  return kLibrary;
}

const Script& script_for(Algorithm algorithm, Op op) {
  for (const Entry& e : kScripts) {
    if (e.algorithm == algorithm_name(algorithm) && e.op == op_name(op)) return e.script;
  }
  throw Error(Code::internal, "redis: no script for " + std::string(algorithm_name(algorithm)));
}

}  // namespace rl::redis
