// The HTTP header fields of a decision, written once for every binding: the
// IETF draft "RateLimit header fields for HTTP" (RateLimit-Policy,
// RateLimit) and Retry-After (RFC 9110). docs/http-headers.md states the
// rule; conformance/http/headers.yaml holds the cases every binding checks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rl {

// The fields, in the order a response carries them (rl_header in the C ABI).
enum class Header : int { policy = 0, rate_limit = 1, retry_after = 2 };
inline constexpr int kHeaderCount = 3;

// "RateLimit-Policy": the field name of a header; nullptr for a value that
// is not a header.
const char* header_name(int header);

// One limit as the policy shows it: `limit` units per `window_us`.
struct HeaderLimit {
  int64_t limit;
  int64_t window_us;
};

// What of a decision the fields show.
struct HeaderDecision {
  bool allowed;
  int64_t remaining;
  int64_t retry_after_us;  // -1: never
  int64_t reset_after_us;
  int64_t limit_index;
  int source;  // a Source; fail_open counted nothing, so it gets no fields
};

// The value of each field, indexed by Header; nullopt where the field is not
// sent. Bad input (an empty or unquotable name, no limits, a limit_index
// beyond the limits, a negative count) throws Error(invalid_arg) naming it.
using HeaderValues = std::array<std::optional<std::string>, kHeaderCount>;
HeaderValues rate_limit_headers(std::string_view name, std::span<const HeaderLimit> limits,
                                const HeaderDecision& decision);

// Whole seconds as the fields count them: rounded up, so a client that
// waits as told is never early.
int64_t header_seconds(int64_t us);

// text as an RFC 9651 structured-field string: in double quotes, with " and
// \ escaped. Throws Error(invalid_arg) naming `what` for a byte outside
// printable ASCII, which a structured-field string cannot carry.
std::string sf_string(std::string_view text, std::string_view what);

}  // namespace rl
