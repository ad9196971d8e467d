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
