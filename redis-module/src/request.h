// One decision as the module's commands carry it, with the arguments of the
// Lua path (docs/key-schema.md): now in us ('' for the server's clock), the
// cost (suppressed: "<cost> <draw> <factor_reuse_us>"; release: "<units>
// <granted_at>", a lease's unused units and its grant's time), and the limits (the
// smallest TTL in ms, then limit, window_us, burst, limit_reduced,
// window_reduced, granularity_us per limit). Parsing is pure (no server),
// so the fuzzer drives it directly; every value is checked against the
// bounds the algorithms' arithmetic is exact within.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "algorithm_kind.h"
#include "algorithms/decide.h"
#include "algorithms/suppressed.h"
#include "config/rate.h"

namespace rl::module {

// At most this many decisions in one RL.BATCH: bounded work per command.
inline constexpr int kMaxBatch = 1000;
// A larger stored value is refused as corrupt (the largest rl writes: 8
// sliding_window limits of 1,000 sub-windows, under 400 KB).
inline constexpr size_t kMaxValueBytes = 1 << 20;

struct Request {
  AlgorithmKind algorithm = AlgorithmKind::gcra;
  Op op = Op::acquire;
  std::optional<int64_t> now;  // nullopt: the server's clock
  int64_t cost = 0;
  Chance chance;  // suppressed only
  // lease: cost "<units> <hold_us>"; release: "<units> <granted_at> <slice>"
  // (the older "<units>" and "<units> <granted_at>" for the windows).
  LeaseArgs lease;
  int64_t min_ttl_ms = 0;
  std::vector<Rate> rates;
};

// Throws CommandError naming the argument.
AlgorithmKind parse_algorithm_arg(std::string_view text);
Op parse_op_arg(std::string_view text);
// "<algorithm>_<op>", as RL.BATCH (and the Lua batch) names a call.
void parse_call_name(std::string_view text, AlgorithmKind& algorithm, Op& op);
Request parse_request(AlgorithmKind algorithm, Op op, std::string_view now, std::string_view cost,
                      std::string_view limits);

// parse_request in the steps RL.MANY takes apart: what a batch carries once
// (the clock, the operation's fit to the algorithm, then the limits), and
// each call's cost, which replaces the last call's in `q`.
Request parse_clock(AlgorithmKind algorithm, Op op, std::string_view now);
void parse_limits_into(Request& q, std::string_view limits);
void parse_cost(Request& q, std::string_view cost);

// A whole decimal integer (optional '-'), nothing else; false otherwise.
bool parse_int(std::string_view text, int64_t& out);

}  // namespace rl::module
