#include "scripts.h"

#include <array>
#include <string>

#include "error.h"

namespace rl::redis {
namespace {

struct Entry {
  std::string_view algorithm;
  std::string_view op;
  Script script;
};

// Generated: {"gcra", "acquire", {"<sha1>", R"rl_lua(...)rl_lua"}}, ...
// const, not constexpr: clang would measure every script at compile time and
// pass its constexpr step limit.
const Entry kScripts[] = {
#include "redis_scripts.inc"
};

// Generated: "rl_<version>", R"rl_lua(#!lua name=rl_<version>...)rl_lua"
const Library kLibrary{
#include "redis_library.inc"
};

constexpr Algorithm kAlgorithms[] = {Algorithm::gcra,         Algorithm::token_bucket,
                                     Algorithm::sliding_log,  Algorithm::sliding_window,
                                     Algorithm::fixed_window, Algorithm::suppressed};
constexpr Op kOps[] = {Op::acquire, Op::peek, Op::refund, Op::reset, Op::lease, Op::release};
constexpr size_t kOpCount = std::size(kOps);
constexpr size_t kCalls = std::size(kAlgorithms) * kOpCount;

size_t index_of(Algorithm algorithm, Op op) {
  return static_cast<size_t>(algorithm) * kOpCount + static_cast<size_t>(op);
}

// Per algorithm and operation, found once: every call looks its own up.
struct Names {
  std::array<const Script*, kCalls> scripts{};
  std::array<std::string, kCalls> calls;       // "gcra_acquire"
  std::array<std::string, kCalls> full_calls;  // "gcra_acquire_full"
  std::array<std::string, kCalls> functions;   // "rl_<version>_gcra_acquire"
};

const Names& names() {
  static const Names n = [] {
    Names out;
    for (Algorithm a : kAlgorithms) {
      for (Op op : kOps) {
        const size_t i = index_of(a, op);
        out.calls[i] = std::string(algorithm_name(a)) + "_" + std::string(op_name(op));
        out.full_calls[i] = out.calls[i] + "_full";
        out.functions[i] = std::string(kLibrary.name) + "_" + out.calls[i];
        for (const Entry& e : kScripts) {
          if (e.algorithm == algorithm_name(a) && e.op == op_name(op)) out.scripts[i] = &e.script;
        }
      }
    }
    return out;
  }();
  return n;
}

}  // namespace

const Library& function_library() {
  return kLibrary;
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::acquire: return "acquire";
    case Op::peek: return "peek";
    case Op::refund: return "refund";
    case Op::reset: return "reset";
    case Op::lease: return "lease";
    case Op::release: return "release";
  }
  return "?";
}

const Script& script_for(Algorithm algorithm, Op op) {
  const Script* s = names().scripts.at(index_of(algorithm, op));
  if (s == nullptr)
    throw Error(Code::internal, "redis: no script for " + std::string(algorithm_name(algorithm)));
  return *s;
}

std::string_view call_name(Algorithm algorithm, Op op) {
  return names().calls.at(index_of(algorithm, op));
}

std::string_view full_call_name(Algorithm algorithm, Op op) {
  return names().full_calls.at(index_of(algorithm, op));
}

std::string_view function_name(Algorithm algorithm, Op op) {
  return names().functions.at(index_of(algorithm, op));
}

}  // namespace rl::redis
