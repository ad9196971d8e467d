// rl_setting_describe: the settings table through the C ABI, row by row in
// rl_config_describe's order, for bindings that type settings or check
// their typed lists against it.
#include <gtest/gtest.h>
#include <rl/rl.h>

#include <set>
#include <string>

namespace {

TEST(SettingDescribe, EverySettingIsDescribedInTheConfigsOrder) {
  std::set<std::string> kinds;
  size_t index = 0;
  for (; rl_config_describe(index, nullptr) != nullptr; ++index) {
    rl_setting_info info = RL_SETTING_INFO_INIT;
    rl_error* err = nullptr;
    ASSERT_EQ(rl_setting_describe(index, &info, &err), RL_OK) << rl_error_message(err);
    SCOPED_TRACE(info.name);
    EXPECT_STREQ(info.name, rl_config_describe(index, nullptr));
    EXPECT_TRUE(std::string(info.scope) == "store" || std::string(info.scope) == "limiter");
    kinds.insert(info.kind);
    EXPECT_EQ(info.choices != nullptr, std::string(info.kind) == "choice");
    if (std::string(info.kind) == "count") {
      EXPECT_LE(info.range_min, info.range_max);
    } else {
      EXPECT_EQ(info.range_min, 0);
      EXPECT_EQ(info.range_max, 0);
    }
    EXPECT_GT(std::string(info.description).size(), 10u);
    // rl_config_describe's text is this description with range and default.
    const char* full = nullptr;
    rl_config_describe(index, &full);
    EXPECT_EQ(std::string(full).rfind(info.description, 0), 0u) << full;
    if (std::string(info.name) == "sentinel_password") {
      EXPECT_EQ(info.secret, 1);
    }
    if (std::string(info.name) == "timeout_ms") {
      EXPECT_STREQ(info.scope, "store");
      EXPECT_STREQ(info.kind, "count");
      EXPECT_EQ(info.range_min, 1);
    }
    if (std::string(info.name) == "algorithm") {
      EXPECT_STREQ(info.scope, "limiter");
      EXPECT_STREQ(info.default_value, "gcra");
      EXPECT_NE(std::string(info.choices).find("sliding_log"), std::string::npos);
    }
  }
  EXPECT_GE(index, 30u);
  EXPECT_GE(kinds.size(), 8u);

  rl_setting_info past = RL_SETTING_INFO_INIT;
  rl_error* err = nullptr;
  EXPECT_EQ(rl_setting_describe(index, &past, &err), RL_E_INVALID_ARG);
  EXPECT_NE(std::string(rl_error_message(err)).find("past the last setting"), std::string::npos);
  rl_error_free(err);
  err = nullptr;
  rl_setting_info unversioned{};
  EXPECT_EQ(rl_setting_describe(0, &unversioned, &err), RL_E_INVALID_ARG);
  rl_error_free(err);
  err = nullptr;
  EXPECT_EQ(rl_setting_describe(0, nullptr, &err), RL_E_INVALID_ARG);
  rl_error_free(err);
}

}  // namespace
