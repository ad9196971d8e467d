// One limit: `limit` units per `window`, with a burst (bucket capacity).
// Parsed from strings such as "100/1m" or "10/s, 1000/h".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rl {

struct Rate {
  int64_t limit = 0;           // units per window
  int64_t window_us = 0;       // window length
  int64_t burst = 0;           // capacity; equals limit unless set
  int64_t granularity_us = 0;  // sliding_window's sub-window; divides window_us
  // limit and window divided by their greatest common divisor: the rate
  // limit/window as a reduced fraction, so that scaled arithmetic stays small.
  int64_t limit_reduced = 0;
  int64_t window_reduced = 0;

  std::string to_string() const;  // canonical "limit/window_us"
  bool operator==(const Rate&) const = default;
};

// Largest values accepted (see docs/algorithms.md, "Limits").
inline constexpr int64_t kMaxLimit = int64_t{1} << 40;
inline constexpr int64_t kMaxWindowUs = int64_t{366} * 24 * 3600 * 1000000;
inline constexpr size_t kMaxRates = 8;

// "250ms", "1s", "2m", "1h", "1d", "10us". Throws invalid_arg naming `what`.
int64_t parse_duration(std::string_view text, std::string_view what);

// "10/s, 1000/h": one or more limits, comma-separated. Each is
// <count>/<duration> where the duration's number may be omitted ("10/s").
std::vector<Rate> parse_rates(std::string_view text);

// Fills burst (default: limit) and the reduced fraction; validates that a
// full burst comes back within 2^52 us (burst * window / limit).
void finish_rate(Rate& rate);

}  // namespace rl
