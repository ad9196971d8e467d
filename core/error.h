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

// "RL_E_TIMEOUT": the name of a code, as rl_status_name gives it; nullptr
// for a value that is not a code.
constexpr const char* code_name(int code) {
  constexpr const char* kNames[kCodeCount] = {"RL_OK",
                                              "RL_E_INVALID_ARG",
                                              "RL_E_TIMEOUT",
                                              "RL_E_BACKEND_UNAVAILABLE",
                                              "RL_E_BACKEND_ERROR",
                                              "RL_E_SHUTDOWN",
                                              "RL_E_NO_MEMORY",
                                              "RL_E_INTERNAL",
                                              "RL_E_AUTH",
                                              "RL_E_UNSUPPORTED"};
  return code >= 0 && code < kCodeCount ? kNames[code] : nullptr;
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
