// open_store: picks the store for a URL's scheme and gathers its settings.
#include "memory_store.h"
#include "quote.h"
#include "store.h"
#include "url.h"

namespace rl {

std::shared_ptr<Store> open_store(std::string_view url_text, const Settings& given) {
  given.require_scope(Scope::store);
  Settings settings = given;
  const Url url = parse_url(url_text, 6379);
  for (const auto& [key, value] : url.query) {
    const SettingInfo* info = find_setting(key);
    if (info == nullptr || info->scope != Scope::store) {
      fail_invalid("url: " + quote(key) +
                   " is not a store setting (rl_config_describe lists them)");
    }
    settings.set(key, value);
  }
  std::unique_ptr<Clock> clock;
  if (settings.get("clock").value_or("monotonic") == "manual") {
    clock = std::make_unique<ManualClock>();
  } else {
    clock = std::make_unique<MonotonicClock>();
  }
  if (url.scheme == "memory") {
    if (!url.endpoints.empty() || !url.path.empty()) {
      fail_invalid("url: memory:// takes no host or path, only ?settings");
    }
    size_t max_keys = MemoryStore::kDefaultMaxKeys;
    if (auto v = settings.get("max_keys")) {
      max_keys = static_cast<size_t>(parse_count("max_keys", *v, kMinMaxKeys, kMaxMaxKeys));
    }
    return std::make_shared<MemoryStore>(std::move(clock), max_keys);
  }
  if (settings.get("max_keys")) {
    fail_invalid("max_keys: applies to memory:// only (Redis bounds its memory with maxmemory)");
  }
  if (url.scheme == "redis") {
    return open_redis_store(url, settings, std::move(clock));
  }
  if (url.scheme == "rediss" || url.scheme == "redis+sentinel" || url.scheme == "redis+cluster") {
    throw Error(Code::unsupported, "url: " + url.scheme + ":// is not supported by this build yet");
  }
  fail_invalid("url: unknown scheme " + quote(url.scheme) + "; use memory:// or redis://");
}

}  // namespace rl
