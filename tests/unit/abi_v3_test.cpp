// rl_decision version 3 (suppression_factor, 56 bytes) beside callers built
// against rl.h 1.0 and 1.1, whose decisions are 48 bytes: sync calls write
// only their fields, batch callbacks step by their size, and
// rl_limiter_acquire_batch_async_versioned hands the version asked for.
// (Run under ASan, a write past a 48-byte decision is an error.)
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "capi_helpers.h"

namespace {

// The layout of versions 1 and 2, as an rl.h 1.1 caller's compiler has it.
struct DecisionV2 {
  uint32_t version;
  int32_t allowed;
  int64_t limit;
  int64_t remaining;
  int64_t retry_after_us;
  int64_t reset_after_us;
  int32_t source;
  int32_t limit_index;
};
static_assert(sizeof(DecisionV2) == 48 && sizeof(rl_decision) == 56);

// 16/4s is 4/s; after 16 units in one second (16/s) the factor is 1 - 4/16.
rl_test::LimiterPtr suppressed_at_three_quarters(rl_store* store) {
  auto lim = rl_test::make_limiter(
      store, {{"algorithm", "suppressed"}, {"limit", "16/4s"}, {"hard_limit_factor", "2"}});
  rl_test::acquire(lim.get(), "k", 16);
  return lim;
}

// What a batch callback saw, copied out by the element size it expects.
struct Seen {
  std::mutex mutex;
  std::condition_variable done;
  bool called = false;
  rl_status status = RL_OK;
  std::vector<unsigned char> bytes;
  size_t count = 0;
};

template <size_t Size>
void on_batch(void* user, rl_status status, const rl_decision* decisions, size_t count,
              const rl_error*) {
  auto* seen = static_cast<Seen*>(user);
  std::lock_guard lock(seen->mutex);
  seen->status = status;
  seen->count = count;
  const auto* bytes = reinterpret_cast<const unsigned char*>(decisions);
  if (decisions != nullptr) seen->bytes.assign(bytes, bytes + count * Size);
  seen->called = true;
  seen->done.notify_all();
}

void wait(Seen& seen) {
  std::unique_lock lock(seen.mutex);
  seen.done.wait(lock, [&] { return seen.called; });
}

// They point into `key`, which must outlive them.
std::vector<rl_request> two_requests(const std::string& key) {
  return {rl_test::request(key, 1), rl_test::request(key, 17)};
}

TEST(DecisionV3, CarriesTheSuppressionFactor) {
  auto store = rl_test::open_manual_store();
  auto lim = suppressed_at_three_quarters(store.get());
  const rl_decision d = rl_test::peek(lim.get(), "k");
  EXPECT_EQ(d.version, 3u);
  EXPECT_EQ(d.suppression_factor, 0.75);
  EXPECT_EQ(rl_test::acquire(lim.get(), "k", 17).suppression_factor, 1.0);
  auto other = rl_test::make_limiter(store.get(), {{"limit", "1/s"}});
  EXPECT_EQ(rl_test::acquire(other.get(), "k").suppression_factor, 0.0);
}

TEST(DecisionV3, AVersion2DecisionGetsNoBytesPastIts48) {
  auto store = rl_test::open_manual_store();
  auto lim = suppressed_at_three_quarters(store.get());
  const std::string key = "k";
  const rl_request req = rl_test::request(key, 1);
  auto d = std::make_unique<DecisionV2>();  // exactly 48 bytes on the heap
  d->version = 2;
  ASSERT_EQ(rl_limiter_peek(lim.get(), &req, reinterpret_cast<rl_decision*>(d.get()), nullptr),
            RL_OK);
  EXPECT_EQ(d->version, 2u);
  EXPECT_EQ(d->limit, 16);
  // A sync batch steps through version-2 decisions by 48 bytes.
  const std::vector<rl_request> reqs = two_requests(key);
  auto ds = std::make_unique<DecisionV2[]>(2);
  ds[0].version = ds[1].version = 2;
  ASSERT_EQ(rl_limiter_acquire_batch(lim.get(), reqs.data(), 2,
                                     reinterpret_cast<rl_decision*>(ds.get()), nullptr),
            RL_OK);
  EXPECT_EQ(ds[1].version, 2u);
  EXPECT_EQ(ds[1].allowed, 0);
  EXPECT_EQ(ds[1].retry_after_us, 4000000);
}

TEST(DecisionV3, TheOldBatchCallbackGetsVersion2Elements) {
  auto store = rl_test::open_manual_store();
  auto lim = suppressed_at_three_quarters(store.get());
  const std::string key = "k";  // the requests point into it
  const std::vector<rl_request> reqs = two_requests(key);
  Seen seen;
  ASSERT_EQ(rl_limiter_acquire_batch_async(lim.get(), reqs.data(), 2, on_batch<48>, &seen, nullptr),
            RL_OK);
  wait(seen);
  ASSERT_EQ(seen.status, RL_OK);
  ASSERT_EQ(seen.count, 2u);
  DecisionV2 second;
  std::memcpy(&second, seen.bytes.data() + sizeof(DecisionV2), sizeof second);
  EXPECT_EQ(second.version, 2u);
  EXPECT_EQ(second.allowed, 0);
  EXPECT_EQ(second.limit, 16);
  EXPECT_EQ(second.retry_after_us, 4000000);
}

TEST(DecisionV3, TheVersionedBatchCallbackGetsTheVersionAskedFor) {
  auto store = rl_test::open_manual_store();
  auto lim = suppressed_at_three_quarters(store.get());
  const std::string key = "k";  // the requests point into it
  const std::vector<rl_request> reqs = two_requests(key);
  Seen seen;
  ASSERT_EQ(rl_limiter_acquire_batch_async_versioned(lim.get(), reqs.data(), 2, RL_DECISION_VERSION,
                                                     on_batch<sizeof(rl_decision)>, &seen, nullptr),
            RL_OK);
  wait(seen);
  ASSERT_EQ(seen.count, 2u);
  rl_decision ds[2];
  std::memcpy(ds, seen.bytes.data(), sizeof ds);
  EXPECT_EQ(ds[0].version, 3u);
  EXPECT_EQ(ds[0].suppression_factor, 0.75);
  EXPECT_EQ(ds[1].version, 3u);
  EXPECT_EQ(ds[1].allowed, 0);
  EXPECT_EQ(ds[1].suppression_factor, 1.0);

  for (uint32_t bad : {0u, uint32_t{RL_DECISION_VERSION + 1}}) {
    rl_error* raw = nullptr;
    EXPECT_EQ(rl_limiter_acquire_batch_async_versioned(lim.get(), reqs.data(), 2, bad, on_batch<56>,
                                                       &seen, &raw),
              RL_E_INVALID_ARG);
    rl_test::ErrorPtr err(raw);
    EXPECT_NE(std::string(rl_error_message(raw)).find("decision_version"), std::string::npos)
        << rl_error_message(raw);
  }
}

}  // namespace
