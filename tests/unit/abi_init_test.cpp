// The rl_*_init functions (the *_INIT macros for bindings that cannot expand
// macros) and rl_text_check (the NUL-byte rule for C strings, written once).
#include <cstring>

#include "capi_helpers.h"

namespace {

// Every byte of a struct, to compare an init function with its macro.
template <class T>
bool same_bytes(const T& a, const T& b, size_t size = sizeof(T)) {
  return std::memcmp(&a, &b, size) == 0;
}

template <class T>
void fill_garbage(T& x) {
  std::memset(static_cast<void*>(&x), 0xAB, sizeof(T));
}

TEST(AbiInit, EachFunctionWritesItsMacrosValue) {
  rl_request request;
  fill_garbage(request);
  ASSERT_EQ(rl_request_init(&request, RL_REQUEST_VERSION, nullptr), RL_OK);
  EXPECT_EQ(request.version, uint32_t{RL_REQUEST_VERSION});
  EXPECT_EQ(request.key, nullptr);
  EXPECT_EQ(request.key_len, 0u);
  EXPECT_EQ(request.cost, 0);
  EXPECT_EQ(request.timeout_us, 0);

  rl_decision decision;
  fill_garbage(decision);
  ASSERT_EQ(rl_decision_init(&decision, RL_DECISION_VERSION, nullptr), RL_OK);
  EXPECT_EQ(decision.version, uint32_t{RL_DECISION_VERSION});
  EXPECT_EQ(decision.allowed, 0);
  EXPECT_EQ(decision.limit_index, 0);
  EXPECT_EQ(decision.suppression_factor, 0.0);

  rl_store_info info;
  fill_garbage(info);
  ASSERT_EQ(rl_store_info_init(&info, RL_STORE_INFO_VERSION, nullptr), RL_OK);
  EXPECT_EQ(info.version, uint32_t{RL_STORE_INFO_VERSION});
  EXPECT_EQ(info.scheme, nullptr);
  EXPECT_EQ(info.lua_nodes, 0u);

  rl_store_stats stats;
  fill_garbage(stats);
  ASSERT_EQ(rl_store_stats_init(&stats, RL_STORE_STATS_VERSION, nullptr), RL_OK);
  const rl_store_stats stats_macro = RL_STORE_STATS_INIT;
  EXPECT_TRUE(same_bytes(stats, stats_macro));

  rl_setting_info setting;
  fill_garbage(setting);
  ASSERT_EQ(rl_setting_info_init(&setting, RL_SETTING_INFO_VERSION, nullptr), RL_OK);
  EXPECT_EQ(setting.version, uint32_t{RL_SETTING_INFO_VERSION});
  EXPECT_EQ(setting.name, nullptr);
  EXPECT_EQ(setting.range_max, 0);
}

TEST(AbiInit, AnOlderVersionIsWrittenOverItsOwnSizeOnly) {
  rl_request request;
  fill_garbage(request);
  ASSERT_EQ(rl_request_init(&request, 1, nullptr), RL_OK);
  EXPECT_EQ(request.version, 1u);
  EXPECT_EQ(request.cost, 0);
  int64_t untouched;
  std::memset(&untouched, 0xAB, sizeof untouched);
  EXPECT_EQ(request.timeout_us, untouched) << "written past a version 1 request";

  rl_store_info info;
  fill_garbage(info);
  ASSERT_EQ(rl_store_info_init(&info, 1, nullptr), RL_OK);
  EXPECT_EQ(info.scheme, nullptr);
  EXPECT_NE(info.module_nodes, 0u) << "written past a version 1 store info";

  rl_decision decision;
  fill_garbage(decision);
  ASSERT_EQ(rl_decision_init(&decision, 2, nullptr), RL_OK);
  EXPECT_EQ(decision.limit_index, 0);
  EXPECT_NE(decision.suppression_factor, 0.0) << "written past a version 2 decision";
}

TEST(AbiInit, AnUnknownVersionOrNullIsRefusedAndNothingWritten) {
  rl_decision decision;
  fill_garbage(decision);
  const rl_decision before = decision;
  for (uint32_t version : {0u, uint32_t{RL_DECISION_VERSION} + 1}) {
    rl_error* raw = nullptr;
    EXPECT_EQ(rl_decision_init(&decision, version, &raw), RL_E_INVALID_ARG);
    rl_test::ErrorPtr err(raw);
    EXPECT_NE(std::string(rl_error_message(raw)).find("decision.version: "), std::string::npos)
        << rl_error_message(raw);
    EXPECT_TRUE(same_bytes(decision, before));
  }
  rl_error* raw = nullptr;
  EXPECT_EQ(rl_store_stats_init(nullptr, RL_STORE_STATS_VERSION, &raw), RL_E_INVALID_ARG);
  rl_test::ErrorPtr err(raw);
  EXPECT_STREQ(rl_error_message(raw), "stats: is NULL");
}

TEST(TextCheck, ANulByteIsRefusedNamingTheArgument) {
  const char text[] = "api\0evil";
  EXPECT_EQ(rl_text_check(text, 3, "name", nullptr), RL_OK);
  rl_error* raw = nullptr;
  EXPECT_EQ(rl_text_check(text, sizeof text - 1, "name", &raw), RL_E_INVALID_ARG);
  rl_test::ErrorPtr err(raw);
  EXPECT_STREQ(rl_error_message(raw), "name: contains a NUL byte");
  EXPECT_EQ(rl_text_check(nullptr, 0, "url", nullptr), RL_OK);
  EXPECT_EQ(rl_text_check("", 0, "url", nullptr), RL_OK);
  rl_error* raw2 = nullptr;
  EXPECT_EQ(rl_text_check(nullptr, 2, "url", &raw2), RL_E_INVALID_ARG);
  rl_test::ErrorPtr err2(raw2);
  EXPECT_STREQ(rl_error_message(raw2), "url: is NULL");
  EXPECT_EQ(rl_text_check("x", 1, nullptr, nullptr), RL_E_INVALID_ARG);
}

}  // namespace
