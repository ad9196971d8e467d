// Failures inside the core: a status code (pinned, equal to rl_status in the
// C ABI) and a message that names what was wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace rl {

enum class Code : int {
  ok = 0,
  invalid_arg = 1,
  timeout = 2,
  backend_unavailable = 3,
  backend_error = 4,
  shutdown = 5,
  no_memory = 6,
  internal = 7,
  auth = 8,
  unsupported = 9,
};

// How many codes there are (RL_STATUS_COUNT in the C ABI).
inline constexpr int kCodeCount = 10;

// Each code's name and a one-line description of what it means: the one
// table rl_status_name and rl_status_description read.
struct CodeInfo {
  const char* name;
  const char* description;
};
inline constexpr CodeInfo kCodeInfo[kCodeCount] = {
    {"RL_OK", "success"},
    {"RL_E_INVALID_ARG", "an argument or setting was wrong; the message names it"},
    {"RL_E_TIMEOUT", "the operation did not complete within its deadline"},
    {"RL_E_BACKEND_UNAVAILABLE", "the store (Redis) could not be reached"},
    {"RL_E_BACKEND_ERROR", "the store answered with an error it should not have"},
    {"RL_E_SHUTDOWN", "the store was closed"},
    {"RL_E_NO_MEMORY", "memory could not be allocated"},
    {"RL_E_INTERNAL", "a bug in rl: please report it with the message"},
    {"RL_E_AUTH", "the store refused the credentials (AUTH, ACL)"},
    {"RL_E_UNSUPPORTED", "a valid request this build or store does not support"},
};

// "RL_E_TIMEOUT": the name of a code, as rl_status_name gives it; nullptr
// for a value that is not a code.
constexpr const char* code_name(int code) {
  return code >= 0 && code < kCodeCount ? kCodeInfo[code].name : nullptr;
}

// "the operation did not complete within its deadline": what a code means,
// as rl_status_description gives it; nullptr for a value that is not a code.
constexpr const char* code_description(int code) {
  return code >= 0 && code < kCodeCount ? kCodeInfo[code].description : nullptr;
}

class Error : public std::runtime_error {
 public:
  Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Code code() const noexcept { return code_; }

 private:
  Code code_;
};

[[noreturn]] inline void fail_invalid(const std::string& message) {
  throw Error(Code::invalid_arg, message);
}

}  // namespace rl
