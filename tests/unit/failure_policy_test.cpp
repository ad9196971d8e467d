// The on_failure and local_share settings, and the local fallback's limits.
#include <gtest/gtest.h>

#include "config/policy.h"
#include "error.h"

namespace rl {
namespace {

Policy policy_with(std::initializer_list<std::pair<const char*, const char*>> values) {
  Settings s;
  for (const auto& [k, v] : values) s.set(k, v);
  return Policy::from(s);
}

TEST(FailurePolicy, DefaultsToClosed) {
  const Policy p = policy_with({{"limit", "10/s"}});
  EXPECT_EQ(p.failure.on_failure, OnFailure::closed);
}

TEST(FailurePolicy, LocalShareScalesEachLimitAndBurst) {
  const Policy p = policy_with({{"limit", "100/s, 1000/h"},
                                {"burst", "40, 1000"},
                                {"on_failure", "local"},
                                {"local_share", "1/4"}});
  const Policy local = local_policy(p);
  ASSERT_EQ(local.rates.size(), 2u);
  EXPECT_EQ(local.rates[0].limit, 25);
  EXPECT_EQ(local.rates[0].burst, 10);
  EXPECT_EQ(local.rates[1].limit, 250);
  EXPECT_EQ(local.rates[1].window_us, p.rates[1].window_us);
  EXPECT_NE(local.identity(), p.identity());
}

TEST(FailurePolicy, SharesInEveryForm) {
  for (const char* text : {"1/4", "0.25", ".25", "2/8", "250000/1000000"}) {
    const FailurePolicy f = parse_local_share(text);
    EXPECT_EQ(f.share_numerator, 1) << text;
    EXPECT_EQ(f.share_denominator, 4) << text;
  }
  EXPECT_EQ(parse_local_share("1").share_denominator, 1);
  // A share never scales a limit below 1.
  const Policy p =
      policy_with({{"limit", "3/s"}, {"on_failure", "local"}, {"local_share", "1/100"}});
  EXPECT_EQ(local_policy(p).rates[0].limit, 1);
}

TEST(FailurePolicy, BadValuesNameTheSetting) {
  const std::pair<const char*, const char*> bad[] = {
      {"on_failure", "maybe"}, {"local_share", "0"},  {"local_share", "5/4"},
      {"local_share", "1/0"},  {"local_share", "-1"}, {"local_share", "1.5"},
      {"local_share", "abc"},  {"local_share", "1/"}, {"local_share", "0.1234567"},
  };
  for (const auto& [key, value] : bad) {
    Settings s;
    try {
      s.set(key, value);
      ADD_FAILURE() << key << "=" << value;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::invalid_arg);
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  try {
    policy_with({{"limit", "1/s"}, {"local_share", "1/2"}});
    ADD_FAILURE() << "local_share without on_failure=local";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("local_share"), std::string::npos);
  }
}

}  // namespace
}  // namespace rl
