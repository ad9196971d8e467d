// Every setting of the rl_config table through rl_config_set, then a limiter
// on memory:// with the settings that took, then decisions on it.
//
// Input: lines. "key=value" sets a setting; "acquire|peek|refund|wait|batch
// <n> [key]", "reset [key]" and "advance <us>" are decisions and clock moves
// once the limiter exists (the key defaults to "k").
//
// Properties: rl_config_set fails only with RL_E_INVALID_ARG naming the key;
// memory:// opens with the store settings or refuses them with
// RL_E_INVALID_ARG (then the limiter goes on a store without them); rl_limiter_new
// fails only with RL_E_INVALID_ARG (always when a store setting is in its
// config); a limiter's limits are positive; a decision call fails exactly
// when its key or cost is out of range, and a decision keeps its invariants.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings.h"
#include "fuzz_check.h"
#include "quote.h"

namespace {

using rl_fuzz::check;

constexpr const char* kStoreUrl = "memory://?clock=manual";
constexpr size_t kMaxOps = 64;
constexpr size_t kMaxBatch = 16;
constexpr int64_t kMaxCost = int64_t{1} << 40;

struct Line {
  std::string_view verb;
  int64_t number = 1;
  std::string key = "k";
};

// "acquire 5 user-1": verb, number (1 when absent or malformed), key.
Line parse_op(std::string_view text) {
  Line line;
  const size_t space = text.find(' ');
  line.verb = text.substr(0, space);
  if (space == std::string_view::npos) return line;
  std::string_view rest = text.substr(space + 1);
  const size_t key_at = rest.find(' ');
  const std::string_view number = rest.substr(0, key_at);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec == std::errc() && end == number.data() + number.size()) line.number = value;
  if (key_at != std::string_view::npos) line.key = std::string(rest.substr(key_at + 1));
  return line;
}

struct Configs {
  rl_config* all = rl_config_new();      // every line, as a caller would
  rl_config* store = rl_config_new();    // the store settings among them
  rl_config* limiter = rl_config_new();  // the rest
  bool all_has_store_setting = false;
  ~Configs() {
    rl_config_free(all);
    rl_config_free(store);
    rl_config_free(limiter);
  }
};

void set_setting(Configs& c, const std::string& key, const std::string& value) {
  rl_error* err = nullptr;
  const rl_status status = rl_config_set(c.all, key.c_str(), value.c_str(), &err);
  rl_fuzz::check_outcome(status, err, {RL_E_INVALID_ARG});
  if (status != RL_OK) {
    // The C ABI sees the key up to its first NUL.
    const std::string seen(key.c_str());
    const std::string named = rl::find_setting(seen) ? seen : rl::quote(seen);
    check(std::string_view(rl_error_message(err)).find(named) != std::string_view::npos,
          "a refused setting's message does not name its key", rl_error_message(err));
  }
  rl_error_free(err);
  const rl::SettingInfo* info = rl::find_setting(key.c_str());
  const bool store = info != nullptr && info->scope == rl::Scope::store;
  if (store && status == RL_OK) c.all_has_store_setting = true;
  const rl_status routed =
      rl_config_set(store ? c.store : c.limiter, key.c_str(), value.c_str(), nullptr);
  check(routed == status, "the same setting was taken by one config and not another", key);
}

struct Limits {
  std::vector<rl_limit_info> info;
  int64_t most = 0;  // largest limit or burst: no remaining count exceeds it
};

Limits limits_of(const rl_limiter* limiter) {
  Limits l;
  const size_t n = rl_limiter_limits(limiter, nullptr, 0);
  check(n >= 1 && n <= 8, "a limiter has no limit or more than 8");
  l.info.resize(n);
  check(rl_limiter_limits(limiter, l.info.data(), n) == n, "rl_limiter_limits changed its count");
  for (const rl_limit_info& i : l.info) {
    check(i.limit >= 1 && i.limit <= kMaxCost, "a limit outside 1 to 2^40");
    check(i.window_us >= 1, "a window of no time");
    check(i.burst >= 1 && i.burst <= kMaxCost, "a burst outside 1 to 2^40");
    l.most = std::max({l.most, i.limit, i.burst});
  }
  return l;
}

void check_decision(const rl_decision& d, const Limits& limits) {
  check(d.allowed == 0 || d.allowed == 1, "allowed is neither 0 nor 1");
  check(d.remaining >= 0 && d.remaining <= limits.most, "remaining outside 0 to the largest limit");
  check(d.reset_after_us >= 0, "reset_after_us is negative");
  if (d.allowed) {
    check(d.retry_after_us == 0, "an admitted request has a retry_after");
  } else {
    check(d.retry_after_us >= -1, "retry_after_us below -1");
  }
  const bool known = std::any_of(limits.info.begin(), limits.info.end(),
                                 [&](const rl_limit_info& i) { return i.limit == d.limit; });
  check(known, "a decision names a limit the limiter does not have");
}

// A decision call's outcome: it fails exactly when its input is out of range.
void check_call(rl_status status, rl_error* err, bool valid, const rl_decision* d,
                const Limits& limits) {
  rl_fuzz::check_outcome(status, err, {RL_E_INVALID_ARG});
  rl_error_free(err);
  check((status == RL_OK) == valid, valid ? "a valid call failed" : "an invalid call succeeded");
  if (status == RL_OK && d != nullptr) check_decision(*d, limits);
}

void run_op(rl_store* store, rl_limiter* limiter, const Limits& limits, const Line& op) {
  const bool key_ok = !op.key.empty() && op.key.size() <= RL_MAX_KEY_LEN;
  const int64_t cost = op.number;
  const rl_request request{RL_REQUEST_VERSION, op.key.data(), op.key.size(), cost, 0};
  rl_decision d{};
  d.version = RL_DECISION_VERSION;
  rl_error* err = nullptr;
  if (op.verb == "acquire") {
    const rl_status s = rl_limiter_acquire(limiter, &request, &d, &err);
    check_call(s, err, key_ok && cost >= 1 && cost <= kMaxCost, &d, limits);
  } else if (op.verb == "peek") {
    const rl_status s = rl_limiter_peek(limiter, &request, &d, &err);
    check_call(s, err, key_ok && cost >= 0 && cost <= kMaxCost, &d, limits);
  } else if (op.verb == "refund") {
    const rl_status s = rl_limiter_refund(limiter, &request, &d, &err);
    check_call(s, err, key_ok && cost >= 1 && cost <= kMaxCost, &d, limits);
  } else if (op.verb == "wait") {
    // A manual clock never sleeps: the first decision comes back.
    const rl_status s = rl_limiter_acquire_wait(limiter, &request, 1000000, &d, &err);
    check_call(s, err, key_ok && cost >= 1 && cost <= kMaxCost, &d, limits);
  } else if (op.verb == "reset") {
    const rl_status s = rl_limiter_reset(limiter, op.key.data(), op.key.size(), &err);
    check_call(s, err, key_ok, nullptr, limits);
  } else if (op.verb == "batch") {
    const size_t n = std::min<size_t>(static_cast<size_t>(std::max<int64_t>(cost, 1)), kMaxBatch);
    const std::vector<rl_request> requests(
        n, rl_request{RL_REQUEST_VERSION, op.key.data(), op.key.size(), 1, 0});
    std::vector<rl_decision> decisions(n, d);
    const rl_status s =
        rl_limiter_acquire_batch(limiter, requests.data(), n, decisions.data(), &err);
    check_call(s, err, key_ok, nullptr, limits);
    if (s == RL_OK) {
      for (const rl_decision& one : decisions) check_decision(one, limits);
    }
  } else if (op.verb == "advance") {
    const rl_status s = rl_store_clock_advance(store, op.number, &err);
    rl_fuzz::check_outcome(s, err, {RL_E_INVALID_ARG});
    rl_error_free(err);
    check(s == RL_OK || op.number < 0 || op.number > (int64_t{1} << 40),
          "a clock advance below 2^40 us was refused");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  Configs configs;
  std::vector<Line> ops;
  while (!input.empty()) {
    const size_t end = input.find('\n');
    const std::string_view text = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view{} : input.substr(end + 1);
    if (const size_t eq = text.find('='); eq != std::string_view::npos) {
      set_setting(configs, std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
    } else if (ops.size() < kMaxOps) {
      ops.push_back(parse_op(text));
    }
  }

  rl_store* store = nullptr;
  rl_error* err = nullptr;
  rl_status status = rl_store_open(kStoreUrl, configs.store, &store, &err);
  // A store setting of another store (Redis's circuit breaker) is refused.
  rl_fuzz::check_outcome(status, err, {RL_E_INVALID_ARG});
  rl_error_free(err);
  if (store == nullptr) {
    check(rl_store_open(kStoreUrl, nullptr, &store, nullptr) == RL_OK, "memory:// did not open");
  }

  rl_limiter* limiter = nullptr;
  err = nullptr;
  status = rl_limiter_new(store, configs.all, &limiter, &err);
  rl_fuzz::check_outcome(status, err, {RL_E_INVALID_ARG});
  rl_error_free(err);
  check(status != RL_OK || !configs.all_has_store_setting, "a limiter took a store setting");
  rl_limiter_free(limiter);

  limiter = nullptr;
  err = nullptr;
  status = rl_limiter_new(store, configs.limiter, &limiter, &err);
  rl_fuzz::check_outcome(status, err, {RL_E_INVALID_ARG});
  rl_error_free(err);
  if (status == RL_OK) {
    const Limits limits = limits_of(limiter);
    for (const Line& op : ops) run_op(store, limiter, limits, op);
  }
  rl_limiter_free(limiter);
  rl_store_free(store);
  return 0;
}
