#include "rate_limit_headers.h"

#include <algorithm>

#include "error.h"
#include "quote.h"
#include "verdict.h"

namespace rl {
namespace {

constexpr int64_t kUsPerSecond = 1'000'000;

// Counts and durations a decision or limit cannot have below min.
void check_at_least(int64_t value, int64_t min, const std::string& what) {
  if (value < min) {
    fail_invalid(what + ": " + std::to_string(value) + " is below " + std::to_string(min));
  }
}

// The policy item of limit i: the limiter's name, "name-i" when it has
// several limits, so each item names one limit.
std::string item_name(std::string_view name, size_t limit_count, size_t i) {
  if (limit_count == 1) return sf_string(name, "name");
  return sf_string(std::string(name) + "-" + std::to_string(i), "name");
}

}  // namespace

const char* header_name(int header) {
  constexpr const char* kNames[kHeaderCount] = {"RateLimit-Policy", "RateLimit", "Retry-After"};
  return header >= 0 && header < kHeaderCount ? kNames[header] : nullptr;
}

int64_t header_seconds(int64_t us) {
  return us / kUsPerSecond + (us % kUsPerSecond > 0 ? 1 : 0);
}

std::string sf_string(std::string_view text, std::string_view what) {
  std::string out = "\"";
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) {
      fail_invalid(std::string(what) + ": " + quote(text) +
                   " cannot be an HTTP structured-field string (printable ASCII only)");
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

HeaderValues rate_limit_headers(std::string_view name, std::span<const HeaderLimit> limits,
                                const HeaderDecision& d) {
  if (name.empty()) fail_invalid("name: is empty");
  if (limits.empty()) fail_invalid("limits: there are none");
  if (d.source < 0 || d.source >= kSourceCount) {
    fail_invalid("decision.source: " + std::to_string(d.source) + " is not a source");
  }
  if (d.limit_index < 0 || static_cast<size_t>(d.limit_index) >= limits.size()) {
    fail_invalid("decision.limit_index: " + std::to_string(d.limit_index) + " is not 0 to " +
                 std::to_string(limits.size() - 1) + ", the limits given");
  }
  check_at_least(d.remaining, 0, "decision.remaining");
  check_at_least(d.reset_after_us, 0, "decision.reset_after_us");
  check_at_least(d.retry_after_us, -1, "decision.retry_after_us");
  std::string policy;
  for (size_t i = 0; i < limits.size(); ++i) {
    const std::string at = "limits[" + std::to_string(i) + "]";
    check_at_least(limits[i].limit, 1, at + ".limit");
    check_at_least(limits[i].window_us, 1, at + ".window_us");
    if (i > 0) policy += ", ";
    // A window of any length is at least 1 s: rounding up never gives 0.
    policy += item_name(name, limits.size(), i) + ";q=" + std::to_string(limits[i].limit) +
              ";w=" + std::to_string(header_seconds(limits[i].window_us));
  }

  HeaderValues values;
  // A fail-open decision counted nothing: there is no quota to tell.
  if (d.source == static_cast<int>(Source::fail_open)) return values;
  values[static_cast<int>(Header::policy)] = std::move(policy);
  // t may be 0: the key is back to full capacity now.
  values[static_cast<int>(Header::rate_limit)] =
      item_name(name, limits.size(), static_cast<size_t>(d.limit_index)) +
      ";r=" + std::to_string(d.remaining) +
      ";t=" + std::to_string(header_seconds(d.reset_after_us));
  // A denial that can be retried; never 0, which would invite a retry at
  // once, and rounded up, so the retry is never early.
  if (!d.allowed && d.retry_after_us >= 0) {
    values[static_cast<int>(Header::retry_after)] =
        std::to_string(std::max<int64_t>(1, header_seconds(d.retry_after_us)));
  }
  return values;
}

}  // namespace rl
