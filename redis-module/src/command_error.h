// A command that cannot run: its reply is this error (already prefixed
// "ERR rl: ..."), naming the argument or the value that was wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace rl::module {

class CommandError : public std::runtime_error {
 public:
  explicit CommandError(const std::string& what) : std::runtime_error("ERR rl: " + what) {}
  // A reply with its own error code (WRONGTYPE ...), as Redis words it.
  struct Verbatim {};
  CommandError(Verbatim, const std::string& reply) : std::runtime_error(reply) {}
};

}  // namespace rl::module
