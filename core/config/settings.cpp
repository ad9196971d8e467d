#include "settings.h"

#include <charconv>
#include <climits>

#include "error.h"
#include "failover/failure_policy.h"
#include "policy.h"
#include "quote.h"
#include "rate.h"

namespace rl {
namespace {

void validate_name(std::string_view value) {
  check_name("name", value);
}
void validate_prefix(std::string_view value) {
  check_name("prefix", value);
}
void validate_algorithm(std::string_view value) {
  parse_algorithm(value);
}
void validate_limit(std::string_view value) {
  parse_rates(value);
}
void validate_burst(std::string_view value) {
  parse_bursts(value);
}
void validate_granularity(std::string_view value) {
  parse_duration(value, "granularity");
}
void validate_hard_limit_factor(std::string_view value) {
  parse_hard_limit_factor_milli(value);
}
void validate_factor_reuse(std::string_view value) {
  if (parse_duration(value, "factor_reuse") > kMaxFactorReuseUs) {
    fail_invalid("factor_reuse: " + quote(value) + " is longer than one hour");
  }
}
void validate_seed(std::string_view value) {
  parse_count("seed", value, 0, INT64_MAX);
}
void validate_clock(std::string_view value) {
  if (value != "monotonic" && value != "manual") {
    fail_invalid("clock: " + quote(value) + " is not 'monotonic' or 'manual'");
  }
}
void validate_timeout(std::string_view value) {
  parse_count("timeout_ms", value, 1, 3600000);
}
void validate_connect_timeout(std::string_view value) {
  parse_count("connect_timeout_ms", value, 1, 3600000);
}
void validate_reconnect_max(std::string_view value) {
  parse_count("reconnect_max_ms", value, 1, 3600000);
}
void validate_on_failure(std::string_view value) {
  parse_on_failure(value);
}
void validate_local_share(std::string_view value) {
  parse_local_share(value);
}
void validate_breaker_failures(std::string_view value) {
  parse_count("breaker_failures", value, 0, 1000000);
}
void validate_breaker_cooldown(std::string_view value) {
  parse_count("breaker_cooldown_ms", value, 1, 3600000);
}
void validate_max_keys(std::string_view value) {
  parse_count("max_keys", value, kMinMaxKeys, kMaxMaxKeys);
}
void validate_script_mode(std::string_view value) {
  if (value != "functions" && value != "scripts") {
    fail_invalid("script_mode: " + quote(value) + " is not 'functions' or 'scripts'");
  }
}
void validate_deny_cache_keys(std::string_view value) {
  parse_count("deny_cache_keys", value, 0, kMaxDenyCacheKeys);
}
void validate_coalesce(std::string_view value) {
  if (value != "on" && value != "off") {
    fail_invalid("coalesce: " + quote(value) + " is not 'on' or 'off'");
  }
}
void validate_liveness_timeout(std::string_view value) {
  parse_count("liveness_timeout_ms", value, 1, 3600000);
}
void validate_path(std::string_view key, std::string_view value) {
  if (value.empty() || value.size() > 4096 || value.find('\0') != std::string_view::npos) {
    fail_invalid(std::string(key) + ": is not a file path (1-4096 bytes, no NUL)");
  }
}
void validate_tls_ca_file(std::string_view value) {
  validate_path("tls_ca_file", value);
}
void validate_tls_ca_dir(std::string_view value) {
  validate_path("tls_ca_dir", value);
}
void validate_tls_cert_file(std::string_view value) {
  validate_path("tls_cert_file", value);
}
void validate_tls_key_file(std::string_view value) {
  validate_path("tls_key_file", value);
}
void validate_tls_server_name(std::string_view value) {
  bool ok = !value.empty() && value.size() <= 253;
  for (char c : value) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.' || c == ':');
  }
  if (!ok) {
    fail_invalid("tls_server_name: " + quote(value) +
                 " is not a host name or address (letters, digits, '-', '.', ':')");
  }
}
void validate_tls_insecure_skip_verify(std::string_view value) {
  parse_bool("tls_insecure_skip_verify", value);
}
void validate_sentinel_user(std::string_view value) {
  if (value.empty() || value.size() > 512) fail_invalid("sentinel_user: is not 1-512 bytes");
}
// The value is a credential: never quoted.
void validate_sentinel_password(std::string_view value) {
  if (value.empty() || value.size() > 512) fail_invalid("sentinel_password: is not 1-512 bytes");
}

constexpr SettingInfo kSettings[] = {
    {"algorithm", Scope::limiter,
     "gcra (default), token_bucket, sliding_log, sliding_window, fixed_window or suppressed",
     validate_algorithm},
    {"limit", Scope::limiter, "one or more limits, e.g. '100/1m' or '10/s, 1000/h' (required)",
     validate_limit},
    {"burst", Scope::limiter,
     "capacity of gcra and token_bucket, one per limit, comma-separated (default: the limit)",
     validate_burst},
    {"name", Scope::limiter,
     "namespace of the limiter's keys: [A-Za-z0-9_.-], 1-64 bytes (default 'default')",
     validate_name},
    {"granularity", Scope::limiter,
     "sub-window of sliding_window and suppressed, dividing every window, at most 1000 per window "
     "(default: the window; suppressed: 100ms or window/1000, the larger)",
     validate_granularity},
    {"hard_limit_factor", Scope::limiter,
     "suppressed: the hard limit is limit * factor, 1 to 1000 with up to 3 decimals; between "
     "limit and hard limit calls are admitted with a probability (default 1)",
     validate_hard_limit_factor},
    {"factor_reuse", Scope::limiter,
     "suppressed: how long a computed suppression factor is reused before it is computed again, "
     "up to 1h (default 100ms)",
     validate_factor_reuse},
    {"seed", Scope::limiter,
     "suppressed: seed of the limiter's random draws, 0 to 2^63-1 (default: 0 with clock=manual, "
     "else random)",
     validate_seed},
    {"on_failure", Scope::limiter,
     "what a store outage (unavailable, timeout) gives: closed (default: the error), open "
     "(allowed, source fail_open) or local (an in-process limiter with local_share decides)",
     validate_on_failure},
    {"local_share", Scope::limiter,
     "with on_failure=local: the share of each limit and burst the local limiter has, such as "
     "1/4 for four instances (default 1)",
     validate_local_share},
    {"deny_cache_keys", Scope::limiter,
     "remember up to this many keys the store denied, and deny them here until their "
     "retry_after passes, without a store call (source deny_cache); 0 (default) is off",
     validate_deny_cache_keys},
    {"clock", Scope::store, "monotonic (default) or manual (tests: time moves only when told)",
     validate_clock},
    {"timeout_ms", Scope::store, "deadline of every store operation, 1-3600000 ms (default 1000)",
     validate_timeout},
    {"connect_timeout_ms", Scope::store, "deadline of a connection attempt (default 1000)",
     validate_connect_timeout},
    {"reconnect_max_ms", Scope::store,
     "longest wait between Redis reconnect attempts; waits start at 10 ms, double, jittered "
     "(default 500)",
     validate_reconnect_max},
    {"max_keys", Scope::store,
     "most keys one limiter policy holds in memory:// or in a local fallback, 64 to 2^32; at the "
     "cap, the keys nearest to idle are forgotten first (default 1000000)",
     validate_max_keys},
    {"breaker_failures", Scope::store,
     "consecutive outages of a Redis node that open its circuit breaker; 0 never opens it "
     "(default 5)",
     validate_breaker_failures},
    {"breaker_cooldown_ms", Scope::store,
     "how long an open circuit breaker refuses calls before it lets one probe through (default "
     "500)",
     validate_breaker_cooldown},
    {"liveness_timeout_ms", Scope::store,
     "a Redis connection that reads nothing this long while replies are awaited is dropped and "
     "reconnected (default 2000)",
     validate_liveness_timeout},
    {"script_mode", Scope::store,
     "how Redis runs rl's Lua code: functions (default: one library, FUNCTION LOAD once, FCALL; "
     "falls back to scripts on a server or user without them) or scripts (EVALSHA)",
     validate_script_mode},
    {"coalesce", Scope::store,
     "on (default): with script_mode=functions, calls that wait behind one in flight leave "
     "together as one FCALL deciding them in order; off: each call is its own command",
     validate_coalesce},
    {"prefix", Scope::store, "first part of every Redis key, [A-Za-z0-9_.-] (default 'rl')",
     validate_prefix},
    {"tls_ca_file", Scope::store,
     "rediss://: PEM file of the CA certificates that sign the server's (default: the system's)",
     validate_tls_ca_file},
    {"tls_ca_dir", Scope::store,
     "rediss://: directory of hashed CA certificates (c_rehash), beside or instead of tls_ca_file",
     validate_tls_ca_dir},
    {"tls_cert_file", Scope::store,
     "rediss://: PEM client certificate (chain) for servers that require one (mutual TLS); needs "
     "tls_key_file",
     validate_tls_cert_file},
    {"tls_key_file", Scope::store, "rediss://: PEM private key of tls_cert_file",
     validate_tls_key_file},
    {"tls_server_name", Scope::store,
     "rediss://: the name sent as SNI and checked against the server's certificate (default: "
     "the URL's host)",
     validate_tls_server_name},
    {"tls_insecure_skip_verify", Scope::store,
     "rediss://: true turns off the check of the server's certificate chain and name: the "
     "connection is encrypted but the server unauthenticated (default false)",
     validate_tls_insecure_skip_verify},
    {"sentinel_user", Scope::store,
     "redis+sentinel://: ACL user for the sentinels (the URL's user is the master's)",
     validate_sentinel_user},
    {"sentinel_password", Scope::store,
     "redis+sentinel://: password for the sentinels (the URL's password is the master's)",
     validate_sentinel_password},
};

}  // namespace

int64_t parse_count(std::string_view key, std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    fail_invalid(std::string(key) + ": " + quote(text) + " is not a whole number from " +
                 std::to_string(min) + " to " + std::to_string(max));
  }
  return value;
}

bool parse_bool(std::string_view key, std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  fail_invalid(std::string(key) + ": " + quote(text) + " is not true or false");
}

const SettingInfo* setting_at(size_t index) {
  return index < std::size(kSettings) ? &kSettings[index] : nullptr;
}

const SettingInfo* find_setting(std::string_view name) {
  for (const auto& s : kSettings) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

void Settings::set(std::string_view key, std::string_view value) {
  const SettingInfo* info = find_setting(key);
  if (info == nullptr) {
    fail_invalid("unknown setting " + quote(key) + " (rl_config_describe lists them)");
  }
  info->validate(value);
  values_[std::string(key)] = std::string(value);
}

std::optional<std::string> Settings::get(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void Settings::require_scope(Scope scope) const {
  for (const auto& [key, value] : values_) {
    if (find_setting(key)->scope != scope) {
      fail_invalid(key + ": is a " + (scope == Scope::store ? "limiter" : "store") +
                   " setting, not a " + (scope == Scope::store ? "store" : "limiter") + " setting");
    }
  }
}

}  // namespace rl
