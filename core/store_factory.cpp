// open_store: picks the store for a URL's scheme and gathers its settings.
#include "config/url.h"
#include "failover/failover_store.h"
#include "memory/memory_store.h"
#include "quote.h"
#include "store.h"

namespace rl {

namespace {

size_t max_keys_of(const Settings& settings) {
  return static_cast<size_t>(settings.store().max_keys);
}

}  // namespace

std::shared_ptr<Store> open_store(std::string_view url_text, const Settings& given) {
  given.require_scope(Scope::store);
  Settings settings = given;
  const Url url = parse_store_url(url_text);
  for (const auto& [key, value] : url.query) {
    const SettingInfo* info = find_setting(key);
    if (info == nullptr || info->scope != Scope::store) {
      fail_invalid("url: " + quote(key) +
                   " is not a store setting (rl_config_describe lists them)");
    }
    settings.set(key, value);
  }
  std::unique_ptr<Clock> clock;
  if (settings.store().manual_clock) {
    clock = std::make_unique<ManualClock>();
  } else {
    clock = std::make_unique<MonotonicClock>();
  }
  if (url.scheme == "memory") {
    if (!url.endpoints.empty() || !url.path.empty()) {
      fail_invalid("url: memory:// takes no host or path, only ?settings");
    }
    if (settings.has("breaker_failures") || settings.has("breaker_cooldown_ms")) {
      fail_invalid("breaker_failures: memory:// has no outages and so no circuit breaker");
    }
    for (const char* key : {"min_replicas", "min_replicas_timeout_ms"}) {
      if (settings.has(key)) fail_invalid(std::string(key) + ": memory:// has no replicas");
    }
    return std::make_shared<MemoryStore>(std::move(clock), max_keys_of(settings));
  }
  if (url.scheme == "redis" || url.scheme == "rediss" || url.scheme == "redis+sentinel" ||
      url.scheme == "redis+cluster" || url.scheme == "rediss+cluster") {
    const BreakerOptions breaker{.failures = settings.store().breaker_failures,
                                 .cooldown_us = settings.store().breaker_cooldown_ms * 1000};
    const size_t local_max_keys = max_keys_of(settings);
    return std::make_shared<FailoverStore>(open_redis_store(url, settings, std::move(clock)),
                                           breaker, local_max_keys);
  }
  fail_invalid("url: unknown scheme " + quote(url.scheme) +
               "; use memory://, redis://, rediss://, redis+sentinel://, redis+cluster:// or "
               "rediss+cluster://");
}

}  // namespace rl
