#include "policy.h"

#include "error.h"
#include "quote.h"

namespace rl {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Algorithm parse_algorithm(std::string_view text) {
  for (Algorithm a : {Algorithm::gcra, Algorithm::token_bucket, Algorithm::sliding_log,
                      Algorithm::sliding_window, Algorithm::fixed_window}) {
    if (text == algorithm_name(a)) return a;
  }
  fail_invalid("algorithm: " + quote(text) +
               " is unknown; use gcra, token_bucket, sliding_log, sliding_window or fixed_window");
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::gcra: return "gcra";
    case Algorithm::token_bucket: return "token_bucket";
    case Algorithm::sliding_log: return "sliding_log";
    case Algorithm::sliding_window: return "sliding_window";
    case Algorithm::fixed_window: return "fixed_window";
  }
  return "?";
}

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
  Policy p;
  if (auto a = settings.get("algorithm")) p.algorithm = parse_algorithm(*a);
  auto limit = settings.get("limit");
  if (!limit) fail_invalid("limit: is required, for example '100/1m'");
  p.rates = parse_rates(*limit);
  if (auto n = settings.get("name")) p.name = *n;
  p.failure = FailurePolicy::from(settings);

  if (auto b = settings.get("burst")) {
    if (p.algorithm != Algorithm::gcra && p.algorithm != Algorithm::token_bucket) {
      fail_invalid(std::string("burst: only gcra and token_bucket take a burst, not ") +
                   algorithm_name(p.algorithm));
    }
    std::vector<int64_t> bursts = parse_bursts(*b);
    if (bursts.size() != p.rates.size()) {
      fail_invalid("burst: " + std::to_string(bursts.size()) + " values for " +
                   std::to_string(p.rates.size()) + " limits; give one per limit");
    }
    for (size_t i = 0; i < bursts.size(); ++i) p.rates[i].burst = bursts[i];
  }
  for (Rate& r : p.rates) finish_rate(r);

  int64_t granularity = 0;
  if (auto g = settings.get("granularity")) {
    if (p.algorithm != Algorithm::sliding_window) {
      fail_invalid(std::string("granularity: only sliding_window takes a granularity, not ") +
                   algorithm_name(p.algorithm));
    }
    granularity = parse_duration(*g, "granularity");
  }
  if (p.algorithm == Algorithm::sliding_window) {
    for (Rate& r : p.rates) {
      r.granularity_us = granularity ? granularity : r.window_us;
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
