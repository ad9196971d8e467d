#include "rate.h"

#include <cctype>
#include <numeric>

#include "clock.h"
#include "error.h"
#include "quote.h"
#include "trim.h"
#include "wide.h"

namespace rl {
namespace {

// Parses a run of decimal digits; false on anything else or overflow past max.
bool parse_positive(std::string_view digits, int64_t max, int64_t& out) {
  if (digits.empty() || digits.size() > 18) return false;
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value <= 0 || value > max) return false;
  out = value;
  return true;
}

int64_t unit_us(std::string_view unit) {
  if (unit == "us") return 1;
  if (unit == "ms") return 1000;
  if (unit == "s" || unit == "sec" || unit == "second") return 1000000;
  if (unit == "m" || unit == "min" || unit == "minute") return 60 * int64_t{1000000};
  if (unit == "h" || unit == "hour") return 3600 * int64_t{1000000};
  if (unit == "d" || unit == "day") return 86400 * int64_t{1000000};
  return 0;
}

int64_t parse_duration_impl(std::string_view text, std::string_view what, bool number_optional) {
  std::string_view s = trim(text);
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  std::string_view number = s.substr(0, digits);
  std::string_view unit = trim(s.substr(digits));
  auto bad = [&](const std::string& why) {
    fail_invalid(std::string(what) + ": " + quote(text) + " " + why);
  };
  if (s.empty()) bad("is empty; expected a duration such as 1s, 500ms, 1m, 1h or 1d");
  int64_t count = 1;
  if (!number.empty()) {
    if (!parse_positive(number, kMaxWindowUs, count)) bad("has a number that is zero or too large");
  } else if (!number_optional) {
    bad("needs a number before its unit, such as 1s or 500ms");
  }
  int64_t unit_length = unit_us(unit);
  if (unit.empty()) bad("needs a unit: us, ms, s, m, h or d");
  if (unit_length == 0) bad("has an unknown unit " + quote(unit) + "; use us, ms, s, m, h or d");
  if (count > kMaxWindowUs / unit_length) bad("is longer than 366 days");
  return count * unit_length;
}

}  // namespace

std::string Rate::to_string() const {
  return std::to_string(limit) + "/" + std::to_string(window_us);
}

int64_t parse_duration(std::string_view text, std::string_view what) {
  return parse_duration_impl(text, what, false);
}

std::vector<Rate> parse_rates(std::string_view text) {
  std::vector<Rate> rates;
  std::string_view rest = text;
  if (trim(rest).empty())
    fail_invalid("limit: is empty; expected for example '100/1m' or '10/s, 1000/h'");
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    size_t slash = item.find('/');
    auto bad = [&](const std::string& why) { fail_invalid("limit: " + quote(item) + " " + why); };
    if (slash == std::string_view::npos)
      bad("has no '/'; expected <count>/<window>, for example 100/1m");
    std::string_view count_text = trim(item.substr(0, slash));
    std::string_view window_text = item.substr(slash + 1);
    Rate rate;
    if (count_text.empty()) bad("has no count before '/'");
    if (!parse_positive(count_text, kMaxLimit, rate.limit)) {
      bad("has a count that is not a whole number from 1 to 2^40");
    }
    if (trim(window_text).empty()) bad("has no window after '/'");
    rate.window_us = parse_duration_impl(window_text, "limit", true);
    rates.push_back(rate);
    if (rates.size() > kMaxRates) fail_invalid("limit: more than 8 limits on one limiter");
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return rates;
}

void finish_rate(Rate& rate) {
  if (rate.burst == 0) rate.burst = rate.limit;
  int64_t g = std::gcd(rate.limit, rate.window_us);
  rate.limit_reduced = rate.limit / g;
  rate.window_reduced = rate.window_us / g;
  // The time a full burst takes to come back: the largest gcra and
  // token_bucket keep ahead of now (times stay below 2^53, see wide.h).
  // Without a burst it is the window; a burst gets here only on those two.
  if (int128{rate.burst} * rate.window_us > int128{kMaxTime} * rate.limit) {
    fail_invalid("burst: " + std::to_string(rate.burst) + " at " + std::to_string(rate.limit) +
                 " per " + std::to_string(rate.window_us) +
                 "us takes longer than 2^52 us (142 years) to come back; burst * window / limit "
                 "must be at most 2^52 us");
  }
}

}  // namespace rl
