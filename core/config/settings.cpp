#include "settings.h"

#include <charconv>
#include <climits>
#include <vector>

#include "error.h"
#include "failover/failure_policy.h"
#include "policy.h"
#include "quote.h"
#include "rate.h"

namespace rl {
namespace {

// Parsers the table's rows share, each naming the row's setting.
int64_t whole(const SettingInfo& s, std::string_view value) {
  return parse_count(s.name, value, s.range->min, s.range->max);
}

// Two spellings, the first of which is true.
bool either(const SettingInfo& s, std::string_view value, const char* yes, const char* no) {
  if (value != yes && value != no) {
    fail_invalid(std::string(s.name) + ": " + quote(value) + " is not '" + yes + "' or '" + no +
                 "'");
  }
  return value == yes;
}

std::string file_path(const SettingInfo& s, std::string_view value) {
  if (value.empty() || value.size() > 4096 || value.find('\0') != std::string_view::npos) {
    fail_invalid(std::string(s.name) + ": is not a file path (1-4096 bytes, no NUL)");
  }
  return std::string(value);
}

std::string host_name(const SettingInfo& s, std::string_view value) {
  bool ok = !value.empty() && value.size() <= 253;
  for (char c : value) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.' || c == ':');
  }
  if (!ok) {
    fail_invalid(std::string(s.name) + ": " + quote(value) +
                 " is not a host name or address (letters, digits, '-', '.', ':')");
  }
  return std::string(value);
}

// A credential or user name: never quoted.
std::string secret(const SettingInfo& s, std::string_view value) {
  if (value.empty() || value.size() > 512)
    fail_invalid(std::string(s.name) + ": is not 1-512 bytes");
  return std::string(value);
}

std::string checked_name(const SettingInfo& s, std::string_view value) {
  check_name(s.name, value);
  return std::string(value);
}

constexpr Range kTimeoutMs{1, 3600000};

using Out = SettingValues;

constexpr SettingInfo kSettings[] = {
    {.name = "algorithm",
     .scope = Scope::limiter,
     .kind = Kind::choice,
     .choices = kAlgorithmChoices,
     .description = "gcra, token_bucket, sliding_log, sliding_window, fixed_window or suppressed",
     .default_value = "gcra",
     .parse = [](const SettingInfo&, std::string_view v,
                 Out& o) { o.limiter.algorithm = parse_algorithm(v); }},
    {.name = "limit",
     .scope = Scope::limiter,
     .kind = Kind::rates,
     .description = "one or more limits, e.g. '100/1m' or '10/s, 1000/h' (required)",
     .parse = [](const SettingInfo&, std::string_view v,
                 Out& o) { o.limiter.rates = parse_rates(v); }},
    {.name = "burst",
     .scope = Scope::limiter,
     .kind = Kind::counts,
     .description =
         "capacity of gcra and token_bucket, one per limit, comma-separated (default: the limit)",
     .parse = [](const SettingInfo&, std::string_view v,
                 Out& o) { o.limiter.bursts = parse_bursts(v); }},
    {.name = "name",
     .scope = Scope::limiter,
     .kind = Kind::text,
     .description = "namespace of the limiter's keys: [A-Za-z0-9_.-], 1-64 bytes",
     .default_value = "default",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.name = checked_name(s, v); }},
    {.name = "granularity",
     .scope = Scope::limiter,
     .kind = Kind::duration,
     .description =
         "sub-window of sliding_window and suppressed, dividing every window, at most 1000 per "
         "window (default: the window; suppressed: 100ms or window/1000, the larger)",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.granularity_us = parse_duration(v, s.name); }},
    {.name = "hard_limit_factor",
     .scope = Scope::limiter,
     .kind = Kind::decimal,
     .description =
         "suppressed: the hard limit is limit * factor, 1 to 1000 with up to 3 decimals; between "
         "limit and hard limit calls are admitted with a probability",
     .default_value = "1",
     .parse = [](const SettingInfo&, std::string_view v,
                 Out& o) { o.limiter.hard_limit_factor_milli = parse_hard_limit_factor_milli(v); }},
    {.name = "factor_reuse",
     .scope = Scope::limiter,
     .kind = Kind::duration,
     .description =
         "suppressed: how long a computed suppression factor is reused before it is computed "
         "again, up to 1h",
     .default_value = "100ms",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.factor_reuse_us = parse_factor_reuse(v, s.name); }},
    {.name = "seed",
     .scope = Scope::limiter,
     .kind = Kind::count,
     .description =
         "suppressed: seed of the limiter's random draws; unset: 0 with clock=manual, else "
         "random",
     .range = Range{0, INT64_MAX},
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.seed = static_cast<uint64_t>(whole(s, v)); }},
    {.name = "on_failure",
     .scope = Scope::limiter,
     .kind = Kind::choice,
     .choices = "closed,open,local",
     .description =
         "what a store outage (unavailable, timeout) gives: closed (the error), open (allowed, "
         "source fail_open) or local (an in-process limiter with local_share decides)",
     .default_value = "closed",
     .parse = [](const SettingInfo&, std::string_view v,
                 Out& o) { o.limiter.failure.on_failure = parse_on_failure(v); }},
    {.name = "local_share",
     .scope = Scope::limiter,
     .kind = Kind::fraction,
     .description =
         "with on_failure=local: the share of each limit and burst the local limiter has, such "
         "as 1/4 for four instances",
     .default_value = "1",
     .parse =
         [](const SettingInfo&, std::string_view v, Out& o) {
           const FailurePolicy share = parse_local_share(v);
           o.limiter.failure.share_numerator = share.share_numerator;
           o.limiter.failure.share_denominator = share.share_denominator;
         }},
    {.name = "deny_cache_keys",
     .scope = Scope::limiter,
     .kind = Kind::count,
     .description =
         "remember up to this many keys the store denied, and deny them here until their "
         "retry_after passes, without a store call (source deny_cache); 0 is off",
     .default_value = "0",
     .range = Range{0, 10000000},
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.deny_cache_keys = whole(s, v); }},
    {.name = "lease",
     .scope = Scope::limiter,
     .kind = Kind::choice,
     .choices = "off,auto",
     .description =
         "auto: a key this process calls past lease_threshold takes a slice of the limit in one "
         "store call and decides from it here until the lease ends (fixed_window, sliding_window, "
         "sliding_log, gcra or token_bucket with one limit; docs/algorithms.md, Leases)",
     .default_value = "off",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.lease.on = !either(s, v, "off", "auto"); }},
    {.name = "lease_ms",
     .scope = Scope::limiter,
     .kind = Kind::count,
     .description =
         "with lease=auto: the longest a lease lasts, in ms; a slice holds about this long of "
         "the process's own rate on the key",
     .default_value = "50",
     .range = Range{1, 60000},
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.lease.lease_us = whole(s, v) * 1000; }},
    {.name = "lease_threshold",
     .scope = Scope::limiter,
     .kind = Kind::count,
     .description =
         "with lease=auto: units per second this process asks of one key before it leases "
         "(below it every call goes to the store)",
     .default_value = "1000",
     .range = Range{1, kMaxLimit},
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.limiter.lease.threshold_per_s = whole(s, v); }},
    {.name = "lease_share",
     .scope = Scope::limiter,
     .kind = Kind::fraction,
     .description = "with lease=auto: the largest share of the limit one slice holds, such as 1/10",
     .default_value = "1/10",
     .parse =
         [](const SettingInfo& s, std::string_view v, Out& o) {
           const FailurePolicy share = parse_share(s.name, v);
           o.limiter.lease.share_numerator = share.share_numerator;
           o.limiter.lease.share_denominator = share.share_denominator;
         }},
    {.name = "clock",
     .scope = Scope::store,
     .kind = Kind::choice,
     .choices = "monotonic,manual",
     .description = "monotonic or manual (tests: time moves only when told)",
     .default_value = "monotonic",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.manual_clock = !either(s, v, "monotonic", "manual"); }},
    {.name = "timeout_ms",
     .scope = Scope::store,
     .kind = Kind::count,
     .description = "deadline of every store operation, in ms",
     .default_value = "1000",
     .range = kTimeoutMs,
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.timeout_ms = whole(s, v); }},
    {.name = "connect_timeout_ms",
     .scope = Scope::store,
     .kind = Kind::count,
     .description = "deadline of a connection attempt, in ms",
     .default_value = "1000",
     .range = kTimeoutMs,
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.connect_timeout_ms = whole(s, v); }},
    {.name = "reconnect_max_ms",
     .scope = Scope::store,
     .kind = Kind::count,
     .description =
         "longest wait between Redis reconnect attempts, in ms; waits start at 10 ms, double, "
         "jittered",
     .default_value = "500",
     .range = kTimeoutMs,
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.reconnect_max_ms = whole(s, v); }},
    {.name = "max_keys",
     .scope = Scope::store,
     .kind = Kind::count,
     .description =
         "most keys one limiter policy holds in memory:// or in a local fallback (at least one "
         "per shard); at the cap, the keys nearest to idle are forgotten first",
     .default_value = "1000000",
     .range = Range{64, int64_t{1} << 32},
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.max_keys = whole(s, v); }},
    {.name = "breaker_failures",
     .scope = Scope::store,
     .kind = Kind::count,
     .description = "consecutive outages of a Redis node that open its circuit breaker; 0 never "
                    "opens it",
     .default_value = "5",
     .range = Range{0, 1000000},
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.breaker_failures = whole(s, v); }},
    {.name = "breaker_cooldown_ms",
     .scope = Scope::store,
     .kind = Kind::count,
     .description =
         "how long an open circuit breaker refuses calls before it lets one probe through, in ms",
     .default_value = "500",
     .range = kTimeoutMs,
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.breaker_cooldown_ms = whole(s, v); }},
    {.name = "liveness_timeout_ms",
     .scope = Scope::store,
     .kind = Kind::count,
     .description = "a Redis connection that reads nothing this long (ms) while replies are "
                    "awaited is dropped and reconnected",
     .default_value = "2000",
     .range = kTimeoutMs,
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.liveness_timeout_ms = whole(s, v); }},
    {.name = "script_mode",
     .scope = Scope::store,
     .kind = Kind::choice,
     .choices = "auto,module,functions,scripts",
     .description =
         "how Redis decides: auto (rl's Redis module on each node that has it, else as "
         "functions), module (the module only), functions (rl's Lua code as one library, "
         "FUNCTION LOAD once, FCALL; falls back to scripts on a server or user without them) or "
         "scripts (EVALSHA)",
     .default_value = "auto",
     .parse =
         [](const SettingInfo& s, std::string_view v, Out& o) {
           if (v != "auto" && v != "module" && v != "functions" && v != "scripts") {
             fail_invalid(std::string(s.name) + ": " + quote(v) +
                          " is not 'auto', 'module', 'functions' or 'scripts'");
           }
           o.store.redis.use_functions = v != "scripts";
           o.store.redis.use_module = v == "auto" || v == "module" ? std::string(v) : "off";
         }},
    {.name = "coalesce",
     .scope = Scope::store,
     .kind = Kind::choice,
     .choices = "on,off",
     .description =
         "on: with script_mode=functions, calls that wait behind one in flight leave together as "
         "one FCALL deciding them in order; off: each call is its own command",
     .default_value = "on",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.coalesce = either(s, v, "on", "off"); }},
    {.name = "min_replicas",
     .scope = Scope::store,
     .kind = Kind::count,
     .description =
         "a decision that wrote waits (WAIT after it, on the same connection) until this many "
         "replicas have it; fewer within min_replicas_timeout_ms is an outage; 0 does not wait",
     .default_value = "0",
     .range = Range{0, 1000},
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.min_replicas = whole(s, v); }},
    {.name = "min_replicas_timeout_ms",
     .scope = Scope::store,
     .kind = Kind::count,
     .description = "with min_replicas: how long the WAIT waits for the replicas, in ms, at most "
                    "the call's time left (default: the call's time left)",
     .range = kTimeoutMs,
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.min_replicas_timeout_ms = whole(s, v); }},
    {.name = "prefix",
     .scope = Scope::store,
     .kind = Kind::text,
     .description = "first part of every Redis key, [A-Za-z0-9_.-], 1-64 bytes",
     .default_value = "rl",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.prefix = checked_name(s, v); }},
    {.name = "tls_ca_file",
     .scope = Scope::store,
     .kind = Kind::path,
     .description =
         "rediss://: PEM file of the CA certificates that sign the server's (default: the "
         "system's)",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.tls.ca_file = file_path(s, v); }},
    {.name = "tls_ca_dir",
     .scope = Scope::store,
     .kind = Kind::path,
     .description =
         "rediss://: directory of hashed CA certificates (c_rehash), beside or instead of "
         "tls_ca_file",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.tls.ca_dir = file_path(s, v); }},
    {.name = "tls_cert_file",
     .scope = Scope::store,
     .kind = Kind::path,
     .description = "rediss://: PEM client certificate (chain) for servers that require one "
                    "(mutual TLS); needs tls_key_file",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.tls.cert_file = file_path(s, v); }},
    {.name = "tls_key_file",
     .scope = Scope::store,
     .kind = Kind::path,
     .description = "rediss://: PEM private key of tls_cert_file",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.tls.key_file = file_path(s, v); }},
    {.name = "tls_server_name",
     .scope = Scope::store,
     .kind = Kind::text,
     .description = "rediss://: the name sent as SNI and checked against the server's "
                    "certificate (default: the URL's host)",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.tls.server_name = host_name(s, v); }},
    {.name = "tls_insecure_skip_verify",
     .scope = Scope::store,
     .kind = Kind::boolean,
     .description = "rediss://: true turns off the check of the server's certificate chain and "
                    "name: the connection is encrypted but the server unauthenticated",
     .default_value = "false",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.tls.insecure_skip_verify = parse_bool(s.name, v); }},
    {.name = "sentinel_user",
     .scope = Scope::store,
     .kind = Kind::text,
     .description = "redis+sentinel://: ACL user for the sentinels (the URL's user is the "
                    "master's)",
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.sentinel_user = secret(s, v); }},
    {.name = "sentinel_password",
     .scope = Scope::store,
     .kind = Kind::text,
     .description = "redis+sentinel://: password for the sentinels (the URL's password is the "
                    "master's)",
     .secret = true,
     .parse = [](const SettingInfo& s, std::string_view v,
                 Out& o) { o.store.redis.sentinel_password = secret(s, v); }},
};

// Every setting at its table default, parsed once.
const SettingValues& defaults() {
  static const SettingValues values = [] {
    SettingValues v;
    for (const SettingInfo& s : kSettings) {
      if (s.default_value != nullptr) s.parse(s, s.default_value, v);
    }
    return v;
  }();
  return values;
}

}  // namespace

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::text: return "text";
    case Kind::count: return "count";
    case Kind::duration: return "duration";
    case Kind::choice: return "choice";
    case Kind::boolean: return "boolean";
    case Kind::rates: return "rates";
    case Kind::counts: return "counts";
    case Kind::decimal: return "decimal";
    case Kind::fraction: return "fraction";
    case Kind::path: return "path";
  }
  return "text";
}

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

const char* full_description(const SettingInfo& info) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> t;
    for (const SettingInfo& s : kSettings) {
      std::string text = s.description;
      std::string facts;
      if (s.range) facts = std::to_string(s.range->min) + " to " + std::to_string(s.range->max);
      if (s.default_value != nullptr) {
        // Numbers as they are, words quoted: "default 1000", "default 'rl'".
        const std::string_view d = s.default_value;
        const bool number = d.find_first_not_of("0123456789") == std::string_view::npos;
        facts += (facts.empty() ? "default " : "; default ") + (number ? std::string(d) : quote(d));
      }
      if (!facts.empty()) text += " (" + facts + ")";
      t.push_back(std::move(text));
    }
    return t;
  }();
  return texts[static_cast<size_t>(&info - kSettings)].c_str();
}

Settings::Settings() : typed_(defaults()) {}

void Settings::set(std::string_view key, std::string_view value) {
  const SettingInfo* info = find_setting(key);
  if (info == nullptr) {
    fail_invalid("unknown setting " + quote(key) + " (rl_config_describe lists them)");
  }
  info->parse(*info, value, typed_);
  values_[std::string(key)] = std::string(value);
}

bool Settings::has(std::string_view key) const {
  return values_.find(key) != values_.end();
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
