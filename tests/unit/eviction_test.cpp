// The memory store's bound on idle keys. A key whose state has fully decayed
// equals no key; each shard sweeps such keys whenever it has doubled since
// its last sweep, so a shard holds at most max(64, 2 * (its live keys + 1))
// keys: with 64 shards and no live keys, at most 64 * 64.
#include <gtest/gtest.h>

#include <string>

#include "clock.h"
#include "limiter.h"
#include "memory/memory_store.h"

namespace {

constexpr size_t kBoundWithoutLiveKeys = 64 * 64;

struct Fixture {
  explicit Fixture(const std::string& url = "memory://?clock=manual")
      : store(rl::open_store(url, {})) {}
  std::shared_ptr<rl::Store> store;
  rl::MemoryStore& memory = dynamic_cast<rl::MemoryStore&>(*store);
  rl::ManualClock& clock = dynamic_cast<rl::ManualClock&>(store->clock());
  rl::Limiter limiter{store, settings()};

  static rl::Settings settings(const char* limit = "10/s") {
    rl::Settings s;
    s.set("algorithm", "gcra");
    s.set("limit", limit);  // 10/s: one unit decays in 100 ms
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

// max_keys: a flood of distinct live keys (a 1 h window, nothing decays)
// cannot grow the table past the cap.
TEST(MaxKeys, AFloodOfLiveKeysStaysUnderTheCap) {
  Fixture f("memory://?clock=manual&max_keys=6400");
  rl::Limiter hourly(f.store, Fixture::settings("100/1h"));
  for (int i = 0; i < 200000; ++i) {
    ASSERT_TRUE(hourly.run(rl::Op::acquire, "flood" + std::to_string(i), 1).verdict.allowed);
    ASSERT_LE(f.memory.key_count(), 6400u) << i;
  }
  EXPECT_GE(f.memory.key_count(), 6400u * 7 / 8 - 64);  // evictions free an eighth at most
}

// At the cap the keys nearest to idle go first: a key that spent its quota
// outlives a flood of keys that each spent one unit.
TEST(MaxKeys, AKeyThatSpentItsQuotaOutlivesAFlood) {
  Fixture f("memory://?clock=manual&max_keys=640");
  rl::Limiter hourly(f.store, Fixture::settings("100/1h"));
  ASSERT_TRUE(hourly.run(rl::Op::acquire, "victim", 100).verdict.allowed);
  for (int i = 0; i < 100000; ++i) hourly.run(rl::Op::acquire, "flood" + std::to_string(i), 1);
  EXPECT_LE(f.memory.key_count(), 640u);
  EXPECT_FALSE(hourly.run(rl::Op::acquire, "victim", 1).verdict.allowed);
}

TEST(MaxKeys, IsAMemoryStoreSettingInItsRange) {
  for (const char* url : {"memory://?max_keys=63", "memory://?max_keys=4294967297",
                          "memory://?max_keys=x", "redis://127.0.0.1:1?max_keys=1"}) {
    try {
      rl::open_store(url, {});
      ADD_FAILURE() << url;
    } catch (const rl::Error& e) {
      EXPECT_EQ(e.code(), rl::Code::invalid_arg) << url;
      EXPECT_NE(std::string(e.what()).find("max_keys"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
