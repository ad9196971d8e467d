#include "request.h"

#include <charconv>
#include <functional>
#include <iterator>
#include <numeric>
#include <string>
#include <unordered_map>

#include "clock.h"
#include "command_error.h"
#include "wide.h"

namespace rl::module {
namespace {

// The text of an argument in an error: bounded, printable.
std::string shown(std::string_view text) {
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < 64; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > 64) out += "...";
  return out + "'";
}

int64_t bounded(std::string_view text, std::string_view what, int64_t min, int64_t max,
                size_t limit_number = 0) {
  int64_t v = 0;
  const bool whole = parse_int(text, v);
  if (whole && v >= min && v <= max) return v;
  // The message only when it fails: this runs 7 times per command.
  std::string name(what);
  if (limit_number > 0) name = "limits: limit " + std::to_string(limit_number) + ": " + name;
  if (!whole) throw CommandError(name + ": " + shown(text) + " is not an integer");
  throw CommandError(name + ": " + std::to_string(v) + " is outside [" + std::to_string(min) +
                     ", " + std::to_string(max) + "]");
}

// The space-separated integers of an argument, each a field of `what`.
std::vector<std::string_view> fields_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (true) {
    const size_t space = text.find(' ', from);
    out.push_back(text.substr(from, space == std::string_view::npos ? space : space - from));
    if (space == std::string_view::npos) break;
    from = space + 1;
    if (out.size() > 1 + 6 * kMaxRates) break;  // too many: reported below, unparsed
  }
  return out;
}

// As the C ABI's Limiter::check_cost: acquire and refund take at least 1
// (and a lease's grant). A return may give back nothing: gcra's and
// token_bucket's slices are released used up too, to end their hold.
int64_t least_cost(Op op) {
  return op == Op::acquire || op == Op::refund || op == Op::lease ? 1 : 0;
}

}  // namespace

bool parse_int(std::string_view text, int64_t& out) {
  if (text.empty() || text.size() > 20 || text[0] == '+') return false;
  // Up to 18 digits cannot overflow (10^18 < 2^63): one multiply-add per
  // digit, what every stored value and argument rl writes takes.
  const size_t from = text[0] == '-' ? 1 : 0;
  if (text.size() > from && text.size() - from <= 18) {
    int64_t v = 0;
    for (size_t i = from; i < text.size(); ++i) {
      const unsigned digit = static_cast<unsigned char>(text[i]) - unsigned{'0'};
      if (digit > 9) return false;
      v = v * 10 + digit;
    }
    out = from ? -v : v;
    return true;
  }
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

AlgorithmKind parse_algorithm_arg(std::string_view text) {
  for (AlgorithmKind a : kAlgorithms) {
    if (text == algorithm_kind_name(a)) return a;
  }
  throw CommandError("algorithm: " + shown(text) +
                     " is unknown; use gcra, token_bucket, sliding_log, sliding_window, "
                     "fixed_window or suppressed");
}

Op parse_op_arg(std::string_view text) {
  if (text == "acquire") return Op::acquire;
  if (text == "peek") return Op::peek;
  if (text == "refund") return Op::refund;
  if (text == "reset") return Op::reset;
  if (text == "lease") return Op::lease;
  if (text == "release") return Op::release;
  throw CommandError("operation: " + shown(text) +
                     " is unknown; use acquire, peek, refund, reset, lease or release");
}

void parse_call_name(std::string_view text, AlgorithmKind& algorithm, Op& op) {
  const size_t underscore = text.rfind('_');
  if (underscore == std::string_view::npos) {
    throw CommandError("call: " + shown(text) + " is not <algorithm>_<operation>");
  }
  algorithm = parse_algorithm_arg(text.substr(0, underscore));
  op = parse_op_arg(text.substr(underscore + 1));
}

namespace {

struct Limits {
  int64_t min_ttl_ms = 0;
  std::vector<Rate> rates;
};

// The limits argument, checked for `algorithm`.
Limits parse_limits(AlgorithmKind algorithm, std::string_view limits) {
  const std::vector<std::string_view> nums = fields_of(limits);
  if (nums.size() < 7 || (nums.size() - 1) % 6 != 0 || nums.size() > 1 + 6 * kMaxRates) {
    throw CommandError("limits: " + shown(limits) +
                       " is not the smallest TTL then 6 integers per limit, 1 to 8 limits");
  }
  Limits out;
  out.min_ttl_ms = bounded(nums[0], "limits: min_ttl_ms", 0, kMaxTime / 1000);
  const size_t count = (nums.size() - 1) / 6;
  out.rates.resize(count);
  for (size_t i = 0; i < count; ++i) {
    auto at = [i] { return "limits: limit " + std::to_string(i + 1) + ": "; };
    Rate& r = out.rates[i];
    const std::string_view* f = &nums[1 + 6 * i];
    r.limit = bounded(f[0], "limit", 1, kMaxLimit, i + 1);
    r.window_us = bounded(f[1], "window_us", 1, kMaxWindowUs, i + 1);
    r.burst = bounded(f[2], "burst", 1, kMaxTime, i + 1);
    r.limit_reduced = bounded(f[3], "limit_reduced", 1, kMaxLimit, i + 1);
    r.window_reduced = bounded(f[4], "window_reduced", 1, kMaxWindowUs, i + 1);
    r.granularity_us = bounded(f[5], "granularity_us", 0, kMaxWindowUs, i + 1);
    const int64_t g = std::gcd(r.limit, r.window_us);
    if (r.limit_reduced != r.limit / g || r.window_reduced != r.window_us / g) {
      throw CommandError(at() +
                         "limit_reduced, window_reduced: not limit and window_us over their "
                         "greatest common divisor");
    }
    // As finish_rate: a full burst comes back within 2^52 us.
    if (int128{r.burst} * r.window_us > int128{kMaxTime} * r.limit) {
      throw CommandError(at() + "burst: burst * window_us / limit is above 2^52 us");
    }
    const bool sub_windows =
        algorithm == AlgorithmKind::sliding_window || algorithm == AlgorithmKind::suppressed;
    if (sub_windows) {
      if (r.granularity_us == 0 || r.window_us % r.granularity_us != 0 ||
          r.window_us / r.granularity_us > 1000) {
        throw CommandError(at() + "granularity_us: " + std::to_string(r.granularity_us) +
                           " must divide window_us into at most 1000 sub-windows");
      }
    }
    if (algorithm == AlgorithmKind::suppressed && r.window_us % 1000000 != 0) {
      throw CommandError(at() + "window_us: suppressed takes whole seconds");
    }
    if (algorithm != AlgorithmKind::suppressed && algorithm != AlgorithmKind::gcra &&
        algorithm != AlgorithmKind::token_bucket && r.burst != r.limit) {
      throw CommandError(at() + "burst: " + algorithm_kind_name(algorithm).data() +
                         " takes no burst (it must equal the limit)");
    }
  }
  return out;
}

// Looks a limits text up without copying it into a std::string first.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// Parsed limits by algorithm and text: a server sees few policies, so each is
// parsed once (as the Lua library does); bounded, emptied when full. A text
// seen before costs a hash and no allocation.
const Limits& limits_of(AlgorithmKind algorithm, std::string_view limits) {
  static std::unordered_map<std::string, Limits, TextHash, std::equal_to<>>
      parsed[std::size(kAlgorithms)];
  auto& of_algorithm = parsed[static_cast<size_t>(algorithm)];
  if (auto it = of_algorithm.find(limits); it != of_algorithm.end()) return it->second;
  Limits fresh = parse_limits(algorithm, limits);  // throws before anything is kept
  if (of_algorithm.size() >= 1024) of_algorithm.clear();
  return of_algorithm.emplace(std::string(limits), std::move(fresh)).first->second;
}

}  // namespace

Request parse_clock(AlgorithmKind algorithm, Op op, std::string_view now) {
  Request q;
  q.algorithm = algorithm;
  q.op = op;
  if (!now.empty()) q.now = bounded(now, "now", 0, kMaxTime);
  if ((op == Op::lease || op == Op::release) && algorithm == AlgorithmKind::suppressed) {
    throw CommandError(std::string("operation: ") + (op == Op::lease ? "lease" : "release") +
                       " takes fixed_window, sliding_window, sliding_log, gcra or token_bucket");
  }
  return q;
}

void parse_cost(Request& q, std::string_view cost) {
  const AlgorithmKind algorithm = q.algorithm;
  const Op op = q.op;
  q.chance = Chance{};
  q.lease = LeaseArgs{};
  if (algorithm == AlgorithmKind::suppressed) {
    const std::vector<std::string_view> parts = fields_of(cost);
    if (parts.size() != 3) {
      throw CommandError("cost: " + shown(cost) +
                         " is not '<cost> <draw> <factor_reuse_us>' (suppressed)");
    }
    q.cost = bounded(parts[0], "cost", least_cost(op), kMaxLimit);
    q.chance.draw = bounded(parts[1], "cost: draw", 0, Suppressed::kScale - 1);
    q.chance.factor_reuse_us = bounded(parts[2], "cost: factor_reuse_us", 0, kMaxTime);
  } else if (op == Op::lease || op == Op::release) {
    // gcra and token_bucket hold a slice's units: they need its length and
    // size; sliding_log records a slice at its lease's end: it needs the
    // length; the windows take the older short forms too.
    const bool holds = algorithm == AlgorithmKind::gcra || algorithm == AlgorithmKind::token_bucket;
    const bool ahead = algorithm == AlgorithmKind::sliding_log;
    const std::vector<std::string_view> parts = fields_of(cost);
    if (op == Op::lease) {
      if (parts.size() != 2 && (holds || ahead || parts.size() != 1)) {
        throw CommandError("cost: " + shown(cost) + " is not '<units> <hold_us>' (lease)");
      }
      q.cost = bounded(parts[0], "cost", least_cost(op), kMaxLimit);
      if (parts.size() == 2) q.lease.hold_us = bounded(parts[1], "cost: hold_us", 1, kMaxTime);
    } else {
      if (parts.size() != 3 && (holds || parts.size() != 2)) {
        throw CommandError("cost: " + shown(cost) +
                           " is not '<units> <granted_at> <slice>' (release)");
      }
      q.cost = bounded(parts[0], "cost", least_cost(op), kMaxLimit);
      q.lease.granted_at = bounded(parts[1], "cost: granted_at", 0, kMaxTime);
      if (parts.size() == 3) q.lease.slice = bounded(parts[2], "cost: slice", 0, kMaxLimit);
    }
  } else {
    q.cost = bounded(cost, "cost", least_cost(op), kMaxLimit);
  }
}

void parse_limits_into(Request& q, std::string_view limits) {
  const Limits& parsed = limits_of(q.algorithm, limits);
  q.min_ttl_ms = parsed.min_ttl_ms;
  q.rates = parsed.rates;
  if ((q.op == Op::lease || q.op == Op::release) && q.rates.size() != 1) {
    throw CommandError("limits: lease and release take one limit");
  }
}

Request parse_request(AlgorithmKind algorithm, Op op, std::string_view now, std::string_view cost,
                      std::string_view limits) {
  Request q = parse_clock(algorithm, op, now);
  parse_cost(q, cost);
  parse_limits_into(q, limits);
  return q;
}

}  // namespace rl::module
