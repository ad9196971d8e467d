// One decision on a string-valued key (every algorithm but sliding_log):
// the stored value in, the reply and the write out, with the core's own
// algorithm code (core/algorithms/) and the Lua path's rules for what is
// written and replied (lua/common.lua): refund and reset always write, an
// acquire writes when admitted (suppressed: every acquire, as it records
// every call), a peek never; a write whose state equals an empty one from
// `now` on deletes the key. Pure: no server, so the fuzzer drives it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "request.h"

namespace rl::module {

struct Reply {
  // {allowed, limit, remaining, retry_after_us, reset_after_us,
  // limit_index[, next_retry_after_us[, suppression factor in 2^-24]]}
  int64_t values[8] = {};
  int size = 6;
};

struct Write {
  enum class Kind { none, remove, set } kind = Kind::none;
  std::string value;
  // set: expire at this instant (ms, Unix) when ttl_ms is 0, else after
  // ttl_ms (the manual clock's minimum TTL rule).
  int64_t expire_at_ms = 0;
  int64_t ttl_ms = 0;
};

struct Decision {
  Reply reply;
  Write write;
};

// `stored`: the key's value, nullopt when the key is missing.
Decision decide_string(const Request& q, std::optional<std::string_view> stored, int64_t now);
// The same into `out`, whose value buffer is reused: no allocation once it
// is large enough (a batch's decisions share one).
void decide_string(const Request& q, std::optional<std::string_view> stored, int64_t now,
                   Decision& out);

// The reply of a verdict, as the Lua path shapes it.
Reply reply_of(const Verdict& v, int size);

// The expiry of a state idle from `idle` on (lua/common.lua expiry()).
void set_expiry(Write& w, int64_t idle, int64_t now, int64_t min_ttl_ms);

}  // namespace rl::module
