// String key/value settings (the rl_config of the C ABI), each parsed once
// when set into typed values (setting_values.h). Every setting belongs to the
// store or to a limiter; the table in settings.cpp is the one place that
// lists them with their parser, range and default.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "setting_values.h"

namespace rl {

enum class Scope { store, limiter };

// The whole numbers a setting accepts.
struct Range {
  int64_t min;
  int64_t max;
};

// What a setting's value is, as a binding types it (rl_setting_info's
// `kind`): kind_name spells it.
enum class Kind {
  text,      // a name, a host, a credential
  count,     // a whole number within `range`
  duration,  // "100ms", "1s", "2m"
  choice,    // one word of `choices`
  boolean,   // true/false (or 1/0)
  rates,     // one or more limits: "10/s, 1000/h"
  counts,    // whole numbers, one per limit, comma-separated
  decimal,   // a number with up to 3 decimals
  fraction,  // "1/4" or "0.25"
  path,      // a file or directory
};
const char* kind_name(Kind kind);

struct SettingInfo {
  const char* name;
  Scope scope;
  Kind kind;
  // Kind::choice: the words it takes, comma-separated.
  const char* choices = nullptr;
  const char* description;
  // The value when unset, as it would be given; nullptr: none (required, or
  // a default no value spells, such as "the limit").
  const char* default_value = nullptr;
  std::optional<Range> range = std::nullopt;  // whole-number settings
  // A credential: its value is never shown, not in a message nor in the
  // display form of a URL (url_display.h), which puts *** in its place.
  bool secret = false;
  // Parses `value` into its field of `out`; throws invalid_arg naming the
  // setting and leaves `out` as it was.
  void (*parse)(const SettingInfo& self, std::string_view value, SettingValues& out) = nullptr;
};

// The settings in a stable order; nullptr past the end.
const SettingInfo* setting_at(size_t index);
const SettingInfo* find_setting(std::string_view name);
// The description with the range and default appended, as
// rl_config_describe and `rlctl settings` show it; lives as long as the
// program.
const char* full_description(const SettingInfo& info);

class Settings {
 public:
  Settings();  // every setting at its default

  // Throws invalid_arg for an unknown key or a malformed value.
  void set(std::string_view key, std::string_view value);
  // Whether the setting was given (not left at its default).
  bool has(std::string_view key) const;
  // Throws invalid_arg when a setting of the other scope is present.
  void require_scope(Scope scope) const;
  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }

  const StoreConfig& store() const { return typed_.store; }
  const LimiterConfig& limiter() const { return typed_.limiter; }

 private:
  std::map<std::string, std::string, std::less<>> values_;
  SettingValues typed_;
};

// Shared parsers, throwing invalid_arg naming `key`.
int64_t parse_count(std::string_view key, std::string_view text, int64_t min, int64_t max);
// "true"/"1" or "false"/"0".
bool parse_bool(std::string_view key, std::string_view text);

}  // namespace rl
