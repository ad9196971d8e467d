// Commands in RESP's request form, as Redis reads them: "*<argc>\r\n", then
// "$<length>\r\n<argument>\r\n" for each argument. The one writer of it:
// format_command for the few fixed commands, and script_call's per-decision
// calls, which size the whole request first and append in place.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rl::redis {

// Bytes of "*<argc>\r\n".
size_t resp_header_size(size_t argc);
// Bytes of one argument: "$<length>\r\n<argument>\r\n".
size_t resp_argument_size(size_t length);

void append_resp_header(std::string& out, size_t argc);
void append_resp_argument(std::string& out, std::string_view argument);

// One command, in a string of its own.
std::string format_command(const std::vector<std::string_view>& args);

}  // namespace rl::redis
