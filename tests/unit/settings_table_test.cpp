// The settings table (core/config/settings.cpp) walked row by row: every
// setting parses its own default, keeps to its range, and refuses a value
// just outside it with a message naming the setting.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <set>
#include <string>

#include "config/algorithm.h"
#include "config/settings.h"
#include "error.h"

namespace rl {
namespace {

std::vector<const SettingInfo*> all_settings() {
  std::vector<const SettingInfo*> all;
  for (size_t i = 0; setting_at(i) != nullptr; ++i) all.push_back(setting_at(i));
  return all;
}

// The message of refusing `value` for `s`, or "" when it was taken.
std::string refusal(const SettingInfo& s, const std::string& value) {
  Settings settings;
  try {
    settings.set(s.name, value);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_arg) << s.name << "=" << value;
    return e.what();
  }
  return "";
}

// One past a bound, in decimal; past INT64_MAX it is no longer an int64.
std::string above(int64_t max) {
  return max == INT64_MAX ? "9223372036854775808" : std::to_string(max + 1);
}

TEST(SettingsTable, EverySettingHasANameADescriptionAndAParser) {
  std::set<std::string> names;
  for (const SettingInfo* s : all_settings()) {
    EXPECT_TRUE(names.insert(s->name).second) << s->name << " is listed twice";
    EXPECT_NE(s->parse, nullptr) << s->name;
    EXPECT_GT(std::string(s->description).size(), 10u) << s->name;
    EXPECT_EQ(find_setting(s->name), s);
  }
  EXPECT_GE(names.size(), 30u);
}

TEST(SettingsTable, EveryDefaultParsesAndIsWhatAnUnsetSettingHolds) {
  const Settings unset;
  Settings given;
  for (const SettingInfo* s : all_settings()) {
    if (s->default_value == nullptr) continue;
    EXPECT_EQ(refusal(*s, s->default_value), "") << s->name;
    given.set(s->name, s->default_value);
  }
  // Setting every default by hand changes no typed value.
  EXPECT_TRUE(given.store() == unset.store());
  EXPECT_TRUE(given.limiter() == unset.limiter());
}

TEST(SettingsTable, EveryDefaultIsInsideItsRange) {
  for (const SettingInfo* s : all_settings()) {
    if (!s->range || s->default_value == nullptr) continue;
    const int64_t value = std::stoll(s->default_value);
    EXPECT_GE(value, s->range->min) << s->name;
    EXPECT_LE(value, s->range->max) << s->name;
  }
}

TEST(SettingsTable, RangesTakeTheirBoundsAndRefuseJustOutsideNamingTheSetting) {
  int ranged = 0;
  for (const SettingInfo* s : all_settings()) {
    if (!s->range) continue;
    ++ranged;
    EXPECT_EQ(refusal(*s, std::to_string(s->range->min)), "") << s->name;
    EXPECT_EQ(refusal(*s, std::to_string(s->range->max)), "") << s->name;
    for (const std::string& outside : {std::to_string(s->range->min - 1), above(s->range->max)}) {
      const std::string message = refusal(*s, outside);
      EXPECT_EQ(message.rfind(std::string(s->name) + ": ", 0), 0u)
          << s->name << "=" << outside << " gave '" << message << "'";
      EXPECT_NE(message.find(std::to_string(s->range->max)), std::string::npos) << message;
    }
  }
  EXPECT_GE(ranged, 8);
}

TEST(SettingsTable, EverySettingRefusesAnEmptyValueNamingItself) {
  for (const SettingInfo* s : all_settings()) {
    const std::string message = refusal(*s, "");
    EXPECT_EQ(message.rfind(std::string(s->name) + ": ", 0), 0u)
        << s->name << " gave '" << message << "'";
  }
}

TEST(SettingsTable, ARefusedValueLeavesTheSettingsAsTheyWere) {
  for (const SettingInfo* s : all_settings()) {
    Settings settings;
    if (s->default_value != nullptr) settings.set(s->name, s->default_value);
    const Settings before = settings;
    EXPECT_THROW(settings.set(s->name, ""), Error) << s->name;
    EXPECT_TRUE(settings.store() == before.store()) << s->name;
    EXPECT_TRUE(settings.limiter() == before.limiter()) << s->name;
    EXPECT_EQ(settings.values(), before.values()) << s->name;
  }
}

TEST(SettingsTable, DescriptionsShowTheTablesRangeAndDefault) {
  for (const SettingInfo* s : all_settings()) {
    const std::string text = full_description(*s);
    EXPECT_EQ(text.rfind(s->description, 0), 0u) << s->name;
    if (s->default_value != nullptr) {
      EXPECT_NE(text.find(std::string("default ")), std::string::npos) << text;
      EXPECT_NE(text.find(s->default_value, std::string(s->description).size()), std::string::npos)
          << text;
    }
    if (s->range) {
      EXPECT_NE(text.find(std::to_string(s->range->min) + " to " + std::to_string(s->range->max)),
                std::string::npos)
          << text;
    }
  }
}

TEST(SettingsTable, UnsetSettingsHoldTheTablesDefaultsTyped) {
  const Settings unset;
  EXPECT_EQ(unset.store().redis.timeout_ms, 1000);
  EXPECT_EQ(unset.store().breaker_cooldown_ms, 500);
  EXPECT_EQ(unset.store().max_keys, 1000000);
  EXPECT_EQ(unset.store().redis.prefix, "rl");
  EXPECT_TRUE(unset.store().redis.use_functions);
  EXPECT_TRUE(unset.store().redis.coalesce);
  EXPECT_FALSE(unset.store().manual_clock);
  EXPECT_EQ(unset.limiter().name, "default");
  EXPECT_EQ(unset.limiter().factor_reuse_us, 100000);
  EXPECT_EQ(unset.limiter().hard_limit_factor_milli, 1000);
  EXPECT_EQ(unset.limiter().failure.on_failure, OnFailure::closed);
  EXPECT_FALSE(unset.has("limit"));
}

// The kind a binding types a setting by says true: counts and only counts
// have a range, choices and only choices list their words, each word
// parses and a word outside them is refused naming the setting.
// The algorithm setting offers exactly the algorithms there are.
TEST(SettingsTable, TheAlgorithmChoicesAreEveryAlgorithm) {
  std::string names;
  for (int a = 0; a <= static_cast<int>(Algorithm::suppressed); ++a) {
    names += (names.empty() ? "" : ",") + std::string(algorithm_name(static_cast<Algorithm>(a)));
  }
  EXPECT_EQ(std::string(find_setting("algorithm")->choices), names);
}

TEST(SettingsTable, EveryKindSaysWhatTheSettingTakes) {
  for (const SettingInfo* s : all_settings()) {
    SCOPED_TRACE(s->name);
    EXPECT_EQ(s->range.has_value(), s->kind == Kind::count);
    EXPECT_EQ(s->choices != nullptr, s->kind == Kind::choice);
    if (s->kind == Kind::choice) {
      std::string words = s->choices;
      size_t at = 0;
      while (at <= words.size()) {
        const size_t comma = std::min(words.find(',', at), words.size());
        EXPECT_EQ(refusal(*s, words.substr(at, comma - at)), "") << words.substr(at, comma - at);
        at = comma + 1;
      }
      EXPECT_NE(refusal(*s, "no-such-word").find(s->name), std::string::npos);
    }
    if (s->kind == Kind::boolean) {
      EXPECT_EQ(refusal(*s, "true"), "");
      EXPECT_EQ(refusal(*s, "false"), "");
    }
    if (s->kind == Kind::duration) {
      EXPECT_EQ(refusal(*s, "1s"), "");
    }
    EXPECT_STRNE(kind_name(s->kind), "");
  }
}

}  // namespace
}  // namespace rl
