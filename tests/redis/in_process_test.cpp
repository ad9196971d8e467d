// Whether a store's calls may wait for I/O is librl's to say (Store::
// in_process, rl_store_info.in_process): the bindings answer on their
// caller's thread only when it says no, never by looking at the URL's
// scheme. memory:// never waits; every Redis topology does.
#include "redis_env.h"

namespace rl::test {
namespace {

TEST(InProcess, MemoryIsInProcess) {
  for (const char* url : {"memory://", "memory://?clock=manual"}) {
    auto store = open_store(url, {});
    EXPECT_TRUE(store->in_process()) << url;
    store->close();
  }
}

TEST(InProcess, NoRedisTopologyIsInProcess) {
  for (const char* topology : kTopologies) {
    auto store = open_store(topology_url(topology), {});
    EXPECT_FALSE(store->in_process()) << topology;
    EXPECT_STREQ(store->scheme(), "redis") << topology;
    store->close();
  }
}

}  // namespace
}  // namespace rl::test
