#include "policy.h"

#include <algorithm>

#include "clock.h"
#include "error.h"
#include "quote.h"
#include "trim.h"

namespace rl {
namespace {

// suppressed: trypema's 100 ms sub-windows, at most 1000 per window.
int64_t default_suppressed_granularity(const Rate& r) {
  return std::max<int64_t>(100000, r.window_us / 1000);
}

// The settings only suppressed takes, refused elsewhere.
void refuse_suppressed_settings(const Settings& settings, Algorithm a) {
  for (const char* key : {"hard_limit_factor", "factor_reuse", "seed"}) {
    if (settings.has(key)) {
      fail_invalid(std::string(key) + ": only suppressed takes it, not " + algorithm_name(a));
    }
  }
}

// The hard limit goes into each rate's burst (the most a window admits);
// windows are whole seconds, as the last second's rate is one of them.
void apply_suppressed_settings(const LimiterConfig& c, Policy& p) {
  const int64_t milli = c.hard_limit_factor_milli;
  for (Rate& r : p.rates) {
    if (r.window_us % 1000000 != 0) {
      fail_invalid("limit: suppressed takes windows of whole seconds, not " +
                   std::to_string(r.window_us) + "us");
    }
    const auto hard = static_cast<__int128>(r.limit) * milli / 1000;
    if (hard > kMaxLimit) {
      fail_invalid("hard_limit_factor: the hard limit " + std::to_string(r.limit) +
                   " * factor is above the maximum 2^40");
    }
    // The bound every burst keeps (finish_rate), which on_failure=local's
    // scaled copy of the policy checks again.
    if (hard * r.window_us > static_cast<__int128>(kMaxTime) * r.limit) {
      fail_invalid("hard_limit_factor: factor * window must be at most 2^52 us (142 years)");
    }
    r.burst = static_cast<int64_t>(hard);
  }
  p.factor_reuse_us = c.factor_reuse_us;
  p.seed = c.seed;
}

}  // namespace

void check_name(std::string_view what, std::string_view value) {
  if (value.empty() || value.size() > 64) {
    fail_invalid(std::string(what) + ": must be 1 to 64 bytes long");
  }
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) {
      fail_invalid(std::string(what) + ": " + quote(value) +
                   " may hold only letters, digits, '_', '.' and '-'");
    }
  }
}

std::vector<int64_t> parse_bursts(std::string_view text) {
  std::vector<int64_t> bursts;
  while (true) {
    size_t comma = text.find(',');
    bursts.push_back(parse_count("burst", trim(text.substr(0, comma)), 1, kMaxLimit));
    if (comma == std::string_view::npos) return bursts;
    text = text.substr(comma + 1);
  }
}

int64_t parse_hard_limit_factor_milli(std::string_view text) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  const bool digits = !whole.empty() && whole.size() <= 4 &&
                      whole.find_first_not_of("0123456789") == std::string_view::npos &&
                      fraction.size() <= 3 &&
                      fraction.find_first_not_of("0123456789") == std::string_view::npos &&
                      (dot == std::string_view::npos || !fraction.empty());
  int64_t milli = 0;
  if (digits) {
    for (char c : whole) milli = milli * 10 + (c - '0');
    milli *= 1000;
    int64_t scale = 100;
    for (char c : fraction) {
      milli += (c - '0') * scale;
      scale /= 10;
    }
  }
  if (!digits || milli < 1000 || milli > 1000000) {
    fail_invalid("hard_limit_factor: " + quote(text) +
                 " is not a number from 1 to 1000 with at most 3 decimals, such as 1.5");
  }
  return milli;
}

int64_t parse_factor_reuse(std::string_view text, std::string_view what) {
  const int64_t us = parse_duration(text, what);
  if (us > kMaxFactorReuseUs) {
    fail_invalid(std::string(what) + ": " + quote(text) + " is longer than one hour");
  }
  return us;
}

std::string Policy::identity() const {
  std::string id = name;
  id += '|';
  id += algorithm_name(algorithm);
  for (const Rate& r : rates) {
    id += '|' + r.to_string() + ':' + std::to_string(r.burst);
    if (r.granularity_us) id += ":g" + std::to_string(r.granularity_us);
  }
  return id;
}

Policy Policy::from(const Settings& settings) {
  settings.require_scope(Scope::limiter);
  const LimiterConfig& c = settings.limiter();
  Policy p;
  p.algorithm = c.algorithm;
  if (!settings.has("limit")) fail_invalid("limit: is required, for example '100/1m'");
  p.rates = c.rates;
  p.name = c.name;
  p.failure = FailurePolicy::from(settings);

  if (settings.has("burst")) {
    if (p.algorithm != Algorithm::gcra && p.algorithm != Algorithm::token_bucket) {
      fail_invalid(std::string("burst: only gcra and token_bucket take a burst, not ") +
                   algorithm_name(p.algorithm));
    }
    if (c.bursts.size() != p.rates.size()) {
      fail_invalid("burst: " + std::to_string(c.bursts.size()) + " values for " +
                   std::to_string(p.rates.size()) + " limits; give one per limit");
    }
    for (size_t i = 0; i < c.bursts.size(); ++i) p.rates[i].burst = c.bursts[i];
  }
  for (Rate& r : p.rates) finish_rate(r);
  if (p.algorithm != Algorithm::suppressed) refuse_suppressed_settings(settings, p.algorithm);

  if (settings.has("granularity")) {
    if (p.algorithm != Algorithm::sliding_window && p.algorithm != Algorithm::suppressed) {
      fail_invalid(std::string("granularity: only sliding_window and suppressed take a "
                               "granularity, not ") +
                   algorithm_name(p.algorithm));
    }
  }
  const int64_t granularity = c.granularity_us;
  if (p.algorithm == Algorithm::suppressed) apply_suppressed_settings(c, p);
  if (p.algorithm == Algorithm::sliding_window || p.algorithm == Algorithm::suppressed) {
    for (Rate& r : p.rates) {
      r.granularity_us = granularity                            ? granularity
                         : p.algorithm == Algorithm::suppressed ? default_suppressed_granularity(r)
                                                                : r.window_us;
      const int64_t g = r.granularity_us;
      if (r.window_us % g != 0) {
        fail_invalid("granularity: " + std::to_string(g) + "us does not divide the window " +
                     std::to_string(r.window_us) + "us");
      }
      if (r.window_us / g > 1000) {
        fail_invalid("granularity: more than 1000 sub-windows in the window " +
                     std::to_string(r.window_us) + "us");
      }
    }
  }
  return p;
}

}  // namespace rl
