// The HTTP header fields of a decision (rl_headers_render): every case of
// conformance/http/headers.yaml, which the Node, Go and Java middleware
// tests read too, and what only the C ABI has (versions, NULLs, the count
// of values, a real limiter's decisions, status descriptions).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "capi_helpers.h"
#include "rl/rl.h"

namespace {

using Fields = std::map<std::string, std::string>;

struct Rendered {
  rl_status status = RL_OK;
  std::string message;
  Fields fields;
};

Rendered render(const char* name, const std::vector<rl_limit_info>& limits,
                const rl_decision& decision) {
  char* values[RL_HEADER_COUNT] = {};
  rl_error* err = nullptr;
  Rendered r;
  r.status = rl_headers_render(name, limits.data(), limits.size(), &decision, values,
                               RL_HEADER_COUNT, &err);
  r.message = rl_error_message(err);
  rl_error_free(err);
  for (int i = 0; i < RL_HEADER_COUNT; ++i) {
    if (values[i] != nullptr) r.fields[rl_header_name(i)] = values[i];
    rl_string_free(values[i]);
  }
  return r;
}

int source_of(const std::string& name) {
  for (int s = 0; s < RL_SOURCE_COUNT; ++s) {
    if (name == rl_source_name(s)) return s;
  }
  ADD_FAILURE() << "not a source: " << name;
  return -1;
}

TEST(HttpHeaders, EveryCaseOfTheSharedTable) {
  const YAML::Node cases = YAML::LoadFile(RL_HTTP_HEADERS)["cases"];
  ASSERT_GE(cases.size(), 20u);
  for (const YAML::Node& c : cases) {
    const std::string name = c["name"].as<std::string>();
    std::vector<rl_limit_info> limits;
    for (const YAML::Node& l : c["limiter"]["limits"]) {
      limits.push_back({l["limit"].as<int64_t>(), l["window_us"].as<int64_t>(), 0});
    }
    const YAML::Node d = c["decision"];
    rl_decision decision = RL_DECISION_INIT;
    decision.allowed = d["allowed"].as<bool>() ? 1 : 0;
    decision.remaining = d["remaining"].as<int64_t>();
    decision.retry_after_us = d["retry_after_us"].as<int64_t>();
    decision.reset_after_us = d["reset_after_us"].as<int64_t>();
    decision.limit_index = d["limit_index"].as<int32_t>();
    decision.source = source_of(d["source"].as<std::string>());
    const Rendered r = render(c["limiter"]["name"].as<std::string>().c_str(), limits, decision);
    if (c["error"]) {
      EXPECT_EQ(r.status, RL_E_INVALID_ARG) << name;
      EXPECT_NE(r.message.find(c["error"].as<std::string>()), std::string::npos)
          << name << ": " << r.message;
      EXPECT_TRUE(r.fields.empty()) << name;
      continue;
    }
    ASSERT_EQ(r.status, RL_OK) << name << ": " << r.message;
    EXPECT_EQ(r.fields, c["headers"].as<Fields>()) << name;
  }
}

TEST(HttpHeaders, NamesFromOneTable) {
  EXPECT_STREQ(rl_header_name(RL_HEADER_RATELIMIT_POLICY), "RateLimit-Policy");
  EXPECT_STREQ(rl_header_name(RL_HEADER_RATELIMIT), "RateLimit");
  EXPECT_STREQ(rl_header_name(RL_HEADER_RETRY_AFTER), "Retry-After");
  EXPECT_EQ(rl_header_name(-1), nullptr);
  EXPECT_EQ(rl_header_name(RL_HEADER_COUNT), nullptr);
}

const std::vector<rl_limit_info> kOneLimit = {{100, 60'000'000, 100}};

rl_decision denial() {
  rl_decision d = RL_DECISION_INIT;
  d.retry_after_us = 1'500'000;
  d.reset_after_us = 60'000'000;
  return d;
}

// A version 1 decision has no limit_index: it is of the first limit, and
// whatever lies where version 2 keeps it is not read.
TEST(HttpHeaders, VersionOneDecisionIsOfTheFirstLimit) {
  rl_decision d = denial();
  d.version = 1;
  d.limit_index = 7;
  const Rendered r = render("api", {{1, 1'000'000, 1}, {2, 2'000'000, 2}}, d);
  ASSERT_EQ(r.status, RL_OK) << r.message;
  EXPECT_EQ(r.fields.at("RateLimit"), "\"api-0\";r=0;t=60");
}

TEST(HttpHeaders, BadArgumentsAreNamedAndLeaveEveryValueNull) {
  char* values[RL_HEADER_COUNT] = {};
  const rl_decision d = denial();
  const auto fails = [&](const char* name, const rl_limit_info* limits, size_t limit_count,
                         const rl_decision* decision, const char* named) {
    values[0] = values[1] = values[2] = reinterpret_cast<char*>(&values);  // not NULL
    rl_error* err = nullptr;
    EXPECT_EQ(rl_headers_render(name, limits, limit_count, decision, values, RL_HEADER_COUNT, &err),
              RL_E_INVALID_ARG);
    EXPECT_NE(std::string(rl_error_message(err)).find(named), std::string::npos)
        << rl_error_message(err);
    rl_error_free(err);
    for (char* v : values) EXPECT_EQ(v, nullptr);
  };
  fails(nullptr, kOneLimit.data(), 1, &d, "name: is NULL");
  fails("api", nullptr, 1, &d, "limits: is NULL");
  fails("api", kOneLimit.data(), 1, nullptr, "decision: is NULL");
  rl_decision unversioned = d;
  unversioned.version = 0;
  fails("api", kOneLimit.data(), 1, &unversioned, "decision.version");
  rl_decision unknown_source = d;
  unknown_source.source = RL_SOURCE_COUNT;
  fails("api", kOneLimit.data(), 1, &unknown_source, "decision.source");
  const rl_limit_info no_window{1, 0, 1};
  fails("api", &no_window, 1, &d, "limits[0].window_us: 0 is below 1");
  rl_error* err = nullptr;
  EXPECT_EQ(rl_headers_render("api", kOneLimit.data(), 1, &d, nullptr, 3, &err), RL_E_INVALID_ARG);
  EXPECT_STREQ(rl_error_message(err), "values: is NULL");
  rl_error_free(err);
}

// A caller built for fewer fields gets those; room for more gets NULLs.
TEST(HttpHeaders, CountOfValues) {
  const rl_decision d = denial();
  EXPECT_EQ(rl_headers_render("api", kOneLimit.data(), 1, &d, nullptr, 0, nullptr), RL_OK);
  char* one[1] = {};
  ASSERT_EQ(rl_headers_render("api", kOneLimit.data(), 1, &d, one, 1, nullptr), RL_OK);
  EXPECT_STREQ(one[0], "\"api\";q=100;w=60");
  rl_string_free(one[0]);
  char* five[5] = {};
  five[3] = five[4] = reinterpret_cast<char*>(&five);
  ASSERT_EQ(rl_headers_render("api", kOneLimit.data(), 1, &d, five, 5, nullptr), RL_OK);
  EXPECT_STREQ(five[2], "2");
  EXPECT_EQ(five[3], nullptr);
  EXPECT_EQ(five[4], nullptr);
  for (char* v : five) rl_string_free(v);
}

// What a real limiter decides renders from its own name and limits.
TEST(HttpHeaders, RealLimiterDecisions) {
  auto store = rl_test::open_manual_store();
  auto limiter = rl_test::make_limiter(
      store.get(), {{"algorithm", "fixed_window"}, {"limit", "2/s, 3/m"}, {"name", "login"}});
  std::vector<rl_limit_info> limits(rl_limiter_limits(limiter.get(), nullptr, 0));
  rl_limiter_limits(limiter.get(), limits.data(), limits.size());
  rl_test::acquire(limiter.get(), "k");
  rl_test::acquire(limiter.get(), "k");
  const rl_decision denied = rl_test::acquire(limiter.get(), "k");
  ASSERT_EQ(denied.allowed, 0);
  const Rendered r = render(rl_limiter_name(limiter.get()), limits, denied);
  ASSERT_EQ(r.status, RL_OK) << r.message;
  EXPECT_EQ(r.fields.at("RateLimit-Policy"), "\"login-0\";q=2;w=1, \"login-1\";q=3;w=60");
  // t is the decision's reset_after: the key is full again once the minute is.
  EXPECT_EQ(r.fields.at("RateLimit"), "\"login-0\";r=0;t=60");
  EXPECT_EQ(r.fields.at("Retry-After"), "1");
}

TEST(StatusDescription, OneLinePerStatusBesideItsName) {
  for (int s = 0; s < RL_STATUS_COUNT; ++s) {
    const char* description = rl_status_description(s);
    ASSERT_NE(description, nullptr) << rl_status_name(s);
    EXPECT_GT(std::string(description).size(), 4u);
    EXPECT_EQ(std::string(description).find('\n'), std::string::npos);
  }
  EXPECT_STREQ(rl_status_description(RL_E_BACKEND_UNAVAILABLE),
               "the store (Redis) could not be reached");
  EXPECT_EQ(rl_status_description(-1), nullptr);
  EXPECT_EQ(rl_status_description(RL_STATUS_COUNT), nullptr);
}

}  // namespace
