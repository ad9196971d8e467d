// Every setting as a typed value, parsed once when it is set (Settings::set).
// The fields start at the defaults of the settings table (settings.cpp), the
// one place that states them, so none is written here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithm.h"
#include "failover/failure_policy.h"
#include "rate.h"

namespace rl {

// rediss://: where the CA certificates and the client's are, and the checks.
struct TlsConfig {
  std::string ca_file;
  std::string ca_dir;
  std::string cert_file;
  std::string key_file;
  std::string server_name;  // empty: the URL's host
  bool insecure_skip_verify = false;

  bool operator==(const TlsConfig&) const = default;
};

// The Redis stores' settings.
struct RedisConfig {
  std::string prefix;
  int64_t timeout_ms = 0;
  int64_t connect_timeout_ms = 0;
  int64_t reconnect_max_ms = 0;
  int64_t liveness_timeout_ms = 0;
  bool use_functions = false;  // script_mode=functions, auto or module, else scripts
  // rl's Redis module (docs/redis-module.md): "auto" (where a node has it),
  // "module" (always) or "off" (script_mode=functions or scripts).
  std::string use_module = "auto";
  bool coalesce = false;
  int64_t min_replicas = 0;             // 0: decisions do not wait for replicas
  int64_t min_replicas_timeout_ms = 0;  // 0: unset, the WAIT gets the call's time left
  TlsConfig tls;
  std::string sentinel_user;
  std::string sentinel_password;  // a credential: never quoted

  bool operator==(const RedisConfig&) const = default;
};

// The store settings: those of every store, then the Redis ones.
struct StoreConfig {
  bool manual_clock = false;
  int64_t max_keys = 0;
  int64_t breaker_failures = 0;
  int64_t breaker_cooldown_ms = 0;
  RedisConfig redis;

  bool operator==(const StoreConfig&) const = default;
};

// lease, lease_ms, lease_threshold, lease_share (core/lease/).
struct LeaseConfig {
  bool on = false;
  int64_t lease_us = 0;
  int64_t threshold_per_s = 0;
  int64_t share_numerator = 0;
  int64_t share_denominator = 0;

  bool operator==(const LeaseConfig&) const = default;
};

// The limiter settings: the inputs of Policy::from, checked there as a whole.
struct LimiterConfig {
  Algorithm algorithm = Algorithm::gcra;
  std::vector<Rate> rates;      // limit; empty until set (it is required)
  std::vector<int64_t> bursts;  // burst, one per limit; empty: the limits
  std::string name;
  int64_t granularity_us = 0;  // 0: the algorithm's default
  int64_t hard_limit_factor_milli = 0;
  int64_t factor_reuse_us = 0;
  std::optional<uint64_t> seed;  // unset: 0 under a manual clock, else random
  FailurePolicy failure;         // on_failure and local_share
  int64_t deny_cache_keys = 0;
  LeaseConfig lease;

  bool operator==(const LimiterConfig&) const = default;
};

struct SettingValues {
  StoreConfig store;
  LimiterConfig limiter;

  bool operator==(const SettingValues&) const = default;
};

}  // namespace rl
