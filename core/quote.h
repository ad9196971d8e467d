// How error messages show input: in single quotes, a bounded prefix with
// control bytes, quotes, backslashes and non-ASCII bytes escaped, so a
// message stays short and printable whatever the caller (or a server) sent.
#pragma once

#include <string>
#include <string_view>

namespace rl {

// Most characters a quote shows, escapes included; longer input ends in "...".
inline constexpr size_t kQuotedMax = 64;

// 'text' with bytes outside printable ASCII (and ' and \) as \xNN.
std::string quote(std::string_view text, size_t max_shown = kQuotedMax);

}  // namespace rl
