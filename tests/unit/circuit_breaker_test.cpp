// The circuit breaker's states on a manual clock: opens after N outages in
// a row, refuses during the cool-down, lets one probe through, and closes
// or opens again on the probe's result.
#include "failover/circuit_breaker.h"

#include <gtest/gtest.h>

#include "clock.h"
#include "failover/outage.h"

namespace rl {
namespace {

using Permit = CircuitBreaker::Permit;

struct Breaker : ::testing::Test {
  ManualClock clock{1000};
  CircuitBreaker breaker{BreakerOptions{3, 500000}, clock};

  void outages(int n) {
    for (int i = 0; i < n; ++i) breaker.on_outage(breaker.admit());
  }
};

TEST_F(Breaker, OpensAfterConsecutiveOutagesOnly) {
  outages(2);
  breaker.on_answer(breaker.admit());  // an answer breaks the run
  outages(2);
  EXPECT_EQ(breaker.state(), BreakerState::closed);
  outages(1);
  EXPECT_EQ(breaker.state(), BreakerState::open);
  EXPECT_EQ(breaker.times_opened(), 1);
  EXPECT_EQ(breaker.admit(), Permit::reject);
}

TEST_F(Breaker, OneProbeAfterTheCooldownClosesIt) {
  outages(3);
  clock.advance(499999);
  EXPECT_EQ(breaker.admit(), Permit::reject);
  clock.advance(1);
  EXPECT_EQ(breaker.admit(), Permit::probe);
  EXPECT_EQ(breaker.state(), BreakerState::half_open);
  EXPECT_EQ(breaker.admit(), Permit::reject) << "one probe at a time";
  breaker.on_answer(Permit::probe);
  EXPECT_EQ(breaker.state(), BreakerState::closed);
  EXPECT_EQ(breaker.admit(), Permit::call);
}

TEST_F(Breaker, AFailedProbeOpensItForAnotherCooldown) {
  outages(3);
  clock.advance(500000);
  breaker.on_outage(breaker.admit());
  EXPECT_EQ(breaker.state(), BreakerState::open);
  EXPECT_EQ(breaker.times_opened(), 2);
  clock.advance(499999);
  EXPECT_EQ(breaker.admit(), Permit::reject);
  clock.advance(1);
  EXPECT_EQ(breaker.admit(), Permit::probe);
}

TEST_F(Breaker, LateOutagesOfCallsStartedBeforeItOpenedChangeNothing) {
  const Permit early = breaker.admit();
  outages(3);
  clock.advance(500000);
  EXPECT_EQ(breaker.admit(), Permit::probe);
  breaker.on_outage(early);  // a call that began while it was closed
  EXPECT_EQ(breaker.state(), BreakerState::half_open);
}

TEST(BreakerOff, ZeroFailuresNeverOpens) {
  ManualClock clock;
  CircuitBreaker breaker{BreakerOptions{0, 1000}, clock};
  for (int i = 0; i < 100; ++i) breaker.on_outage(breaker.admit());
  EXPECT_EQ(breaker.state(), BreakerState::closed);
}

TEST(Outage, IsUnavailableOrTimeoutOnly) {
  for (int c = 0; c <= static_cast<int>(Code::unsupported); ++c) {
    const Code code = static_cast<Code>(c);
    EXPECT_EQ(is_outage(code), code == Code::backend_unavailable || code == Code::timeout) << c;
  }
}

}  // namespace
}  // namespace rl
