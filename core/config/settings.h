// String key/value settings (the rl_config of the C ABI), validated when set.
// Every setting belongs to the store or to a limiter; the table in
// settings.cpp is the one place that lists them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace rl {

enum class Scope { store, limiter };

struct SettingInfo {
  const char* name;
  Scope scope;
  const char* description;
  void (*validate)(std::string_view value);  // throws invalid_arg naming the key
};

// The settings in a stable order; nullptr past the end.
const SettingInfo* setting_at(size_t index);
const SettingInfo* find_setting(std::string_view name);

class Settings {
 public:
  // Throws invalid_arg for an unknown key or a malformed value.
  void set(std::string_view key, std::string_view value);
  std::optional<std::string> get(std::string_view key) const;
  // Throws invalid_arg when a setting of the other scope is present.
  void require_scope(Scope scope) const;
  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

// Range of the memory store's max_keys: at least one key per shard.
inline constexpr int64_t kMinMaxKeys = 64;
// Most keys a limiter's denied-key cache holds (deny_cache_keys).
inline constexpr int64_t kMaxDenyCacheKeys = 10000000;
inline constexpr int64_t kMaxMaxKeys = int64_t{1} << 32;

// Shared parsers, throwing invalid_arg naming `key`.
int64_t parse_count(std::string_view key, std::string_view text, int64_t min, int64_t max);
// "true"/"1" or "false"/"0".
bool parse_bool(std::string_view key, std::string_view text);

}  // namespace rl
