#include "rate_limit_headers.h"

#include <algorithm>
#include <charconv>

#include "error.h"
#include "quote.h"
#include "verdict.h"

namespace rl {
namespace {

constexpr int64_t kUsPerSecond = 1'000'000;

// Counts and durations a decision or limit cannot have below min; `what`
// is made only for the message (a call per request renders these).
template <typename What>
void check_at_least(int64_t value, int64_t min, What what) {
  if (value < min) {
    fail_invalid(std::string(what()) + ": " + std::to_string(value) + " is below " +
                 std::to_string(min));
  }
}

void append_int(std::string& out, int64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

// The policy item of limit i: the limiter's name (quoted once by the
// caller), "name-i" when it has several limits, so each item names one.
void append_item(std::string& out, std::string_view name, std::string_view quoted,
                 size_t limit_count, size_t i) {
  if (limit_count == 1) {
    out += quoted;
    return;
  }
  std::string numbered(name);
  numbered += '-';
  append_int(numbered, static_cast<int64_t>(i));
  out += sf_string(numbered, "name");
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
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
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
  check_at_least(d.remaining, 0, [] { return "decision.remaining"; });
  check_at_least(d.reset_after_us, 0, [] { return "decision.reset_after_us"; });
  check_at_least(d.retry_after_us, -1, [] { return "decision.retry_after_us"; });
  // One limit's items are the quoted name, made once (after that limit's
  // checks, whose errors come first); several limits' are numbered.
  std::string quoted;
  std::string policy;
  policy.reserve(limits.size() * (name.size() + 40));
  for (size_t i = 0; i < limits.size(); ++i) {
    const auto at = [i](const char* field) { return "limits[" + std::to_string(i) + "]." + field; };
    check_at_least(limits[i].limit, 1, [&] { return at("limit"); });
    check_at_least(limits[i].window_us, 1, [&] { return at("window_us"); });
    if (limits.size() == 1) quoted = sf_string(name, "name");
    if (i > 0) policy += ", ";
    // A window of any length is at least 1 s: rounding up never gives 0.
    append_item(policy, name, quoted, limits.size(), i);
    policy += ";q=";
    append_int(policy, limits[i].limit);
    policy += ";w=";
    append_int(policy, header_seconds(limits[i].window_us));
  }

  HeaderValues values;
  // A fail-open decision counted nothing: there is no quota to tell.
  if (d.source == static_cast<int>(Source::fail_open)) return values;
  values[static_cast<int>(Header::policy)] = std::move(policy);
  // t may be 0: the key is back to full capacity now.
  std::string& rate_limit = values[static_cast<int>(Header::rate_limit)].emplace();
  rate_limit.reserve(name.size() + 48);
  append_item(rate_limit, name, quoted, limits.size(), static_cast<size_t>(d.limit_index));
  rate_limit += ";r=";
  append_int(rate_limit, d.remaining);
  rate_limit += ";t=";
  append_int(rate_limit, header_seconds(d.reset_after_us));
  // A denial that can be retried; never 0, which would invite a retry at
  // once, and rounded up, so the retry is never early.
  if (!d.allowed && d.retry_after_us >= 0) {
    std::string& retry = values[static_cast<int>(Header::retry_after)].emplace();
    append_int(retry, std::max<int64_t>(1, header_seconds(d.retry_after_us)));
  }
  return values;
}

}  // namespace rl
