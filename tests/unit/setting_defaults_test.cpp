// The table's defaults are what the stores run with when a setting is left
// unset (no component keeps a default of its own).
#include <gtest/gtest.h>

#include "clock.h"
#include "config/settings.h"
#include "failover/failover_store.h"
#include "store.h"

namespace rl {
namespace {

using Permit = CircuitBreaker::Permit;

// Port 1: nothing listens there; the store opens without connecting first.
std::shared_ptr<Store> unreachable_redis(const std::string& query) {
  return open_store("redis://127.0.0.1:1?clock=manual&" + query, Settings{});
}

// breaker_cooldown_ms is documented as 500 by default; the breaker used to
// keep its own 1 s.
TEST(SettingDefaults, AnOpenBreakerProbesAfterTheDefaultCooldown) {
  auto store = unreachable_redis("breaker_failures=1");
  auto& failover = dynamic_cast<FailoverStore&>(*store);
  auto& clock = dynamic_cast<ManualClock&>(store->clock());
  CircuitBreaker& breaker = failover.breaker();
  breaker.on_outage(breaker.admit());
  ASSERT_EQ(breaker.state(), BreakerState::open);
  clock.advance(499999);
  EXPECT_EQ(breaker.admit(), Permit::reject);
  clock.advance(1);
  EXPECT_EQ(breaker.admit(), Permit::probe);
  store->close();
}

TEST(SettingDefaults, ABreakerOpensAfterTheDefaultFiveOutages) {
  auto store = unreachable_redis("breaker_cooldown_ms=10");
  CircuitBreaker& breaker = dynamic_cast<FailoverStore&>(*store).breaker();
  for (int i = 0; i < 4; ++i) breaker.on_outage(breaker.admit());
  EXPECT_EQ(breaker.state(), BreakerState::closed);
  breaker.on_outage(breaker.admit());
  EXPECT_EQ(breaker.state(), BreakerState::open);
  store->close();
}

}  // namespace
}  // namespace rl
