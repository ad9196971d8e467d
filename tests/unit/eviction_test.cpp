// The memory store's bound on idle keys. A key whose state has fully decayed
// equals no key; each shard sweeps such keys whenever it has doubled since
// its last sweep, so a shard holds at most max(64, 2 * (its live keys + 1))
// keys: with 64 shards and no live keys, at most 64 * 64.
#include <gtest/gtest.h>

#include <string>

#include "clock.h"
#include "limiter.h"
#include "memory_store.h"

namespace {

constexpr size_t kBoundWithoutLiveKeys = 64 * 64;

struct Fixture {
  std::shared_ptr<rl::Store> store = rl::open_store("memory://?clock=manual", {});
  rl::MemoryStore& memory = dynamic_cast<rl::MemoryStore&>(*store);
  rl::ManualClock& clock = dynamic_cast<rl::ManualClock&>(store->clock());
  rl::Limiter limiter{store, settings()};

  static rl::Settings settings() {
    rl::Settings s;
    s.set("algorithm", "gcra");
    s.set("limit", "10/s");  // one unit decays in 100 ms
    return s;
  }
  void touch(const std::string& key) {
    ASSERT_TRUE(limiter.run(rl::Op::acquire, key, 1).verdict.allowed);
  }
};

TEST(Eviction, DecayedKeysAreSweptAsNewKeysArrive) {
  Fixture f;
  for (int i = 0; i < 100000; ++i) f.touch("old" + std::to_string(i));
  EXPECT_EQ(f.memory.key_count(), 100000u);
  // Each new key decays before the next arrives: none stays live.
  for (int i = 0; i < 200000; ++i) {
    f.clock.advance(100000);
    f.touch("new" + std::to_string(i));
  }
  EXPECT_LE(f.memory.key_count(), kBoundWithoutLiveKeys);
}

TEST(Eviction, LiveKeysAreNeverSwept) {
  Fixture f;
  for (int i = 0; i < 20000; ++i) f.touch("old" + std::to_string(i));
  f.clock.advance(99999);  // one microsecond before the old keys decay
  for (int i = 0; i < 40000; ++i) f.touch("new" + std::to_string(i));
  EXPECT_EQ(f.memory.key_count(), 60000u);
  // The first key still remembers its unit: 9 remain, not 10.
  EXPECT_EQ(f.limiter.run(rl::Op::peek, "old0", 0).verdict.remaining, 9);
}

TEST(Eviction, AKeyBackToFullCapacityIsDropped) {
  Fixture f;
  f.touch("refunded");
  f.touch("reset");
  f.limiter.run(rl::Op::refund, "refunded", 1);
  f.limiter.run(rl::Op::reset, "reset", 0);
  EXPECT_EQ(f.memory.key_count(), 0u);
}

TEST(Eviction, PeekAndDenialsStoreNothing) {
  Fixture f;
  f.limiter.run(rl::Op::peek, "peeked", 1);
  f.limiter.run(rl::Op::acquire, "too-big", 11);
  EXPECT_EQ(f.memory.key_count(), 0u);
}

}  // namespace
