// min_replicas and min_replicas_timeout_ms: parsed when set, refused where
// they mean nothing, each refusal naming the setting. (What they do is
// tests/redis/min_replicas_test.cpp's.)
#include <gtest/gtest.h>

#include "config/settings.h"
#include "error.h"
#include "store.h"

namespace rl {
namespace {

// The message of opening `url`, or "" when it opened. Port 1: nothing
// listens there, and the settings are checked before any connection.
std::string refusal(const std::string& url) {
  try {
    open_store(url, Settings{})->close();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_arg) << url;
    return e.what();
  }
  return "";
}

TEST(MinReplicasSettings, AreStoreSettingsParsedIntoTheirFields) {
  Settings s;
  EXPECT_EQ(s.store().redis.min_replicas, 0);  // off unless given
  s.set("min_replicas", "2");
  s.set("min_replicas_timeout_ms", "50");
  EXPECT_EQ(s.store().redis.min_replicas, 2);
  EXPECT_EQ(s.store().redis.min_replicas_timeout_ms, 50);
  EXPECT_EQ(find_setting("min_replicas")->scope, Scope::store);
  EXPECT_EQ(find_setting("min_replicas_timeout_ms")->scope, Scope::store);
}

TEST(MinReplicasSettings, ValuesOutsideTheirRangeAreRefusedNamingTheSetting) {
  for (const char* bad : {"-1", "1001", "one", "", "1.5"}) {
    const std::string message = refusal(std::string("redis://127.0.0.1:1?min_replicas=") + bad);
    EXPECT_EQ(message.rfind("min_replicas: ", 0), 0u) << bad << ": " << message;
  }
  for (const char* bad : {"0", "3600001", "soon"}) {
    const std::string message =
        refusal(std::string("redis://127.0.0.1:1?min_replicas=1&min_replicas_timeout_ms=") + bad);
    EXPECT_EQ(message.rfind("min_replicas_timeout_ms: ", 0), 0u) << bad << ": " << message;
  }
}

TEST(MinReplicasSettings, ATimeoutWithoutMinReplicasIsRefused) {
  EXPECT_EQ(refusal("redis://127.0.0.1:1?min_replicas_timeout_ms=50"),
            "min_replicas_timeout_ms: is set without min_replicas");
  EXPECT_EQ(refusal("redis://127.0.0.1:1?min_replicas=0&min_replicas_timeout_ms=50"),
            "min_replicas_timeout_ms: is set without min_replicas");
  EXPECT_EQ(refusal("redis://127.0.0.1:1?connect_timeout_ms=50&min_replicas=1"), "");
}

TEST(MinReplicasSettings, TheMemoryStoreHasNoReplicas) {
  EXPECT_EQ(refusal("memory://?min_replicas=1"), "min_replicas: memory:// has no replicas");
  EXPECT_EQ(refusal("memory://?min_replicas_timeout_ms=5"),
            "min_replicas_timeout_ms: memory:// has no replicas");
}

}  // namespace
}  // namespace rl
