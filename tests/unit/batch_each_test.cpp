// rl_limiter_acquire_batch_each[_async]: a batch with a status, decision and
// error per request. On memory:// every request is decided; on one Redis node
// a request fails alone when its key holds the wrong type, and an outage
// fails every request (or takes on_failure for each). Batches split across
// Cluster nodes, where one node fails while the others answer, are covered
// by the cluster tests. The Redis cases need scripts/with-redis (ctest runs
// under it).
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "../redis/redis_env.h"
#include "capi_helpers.h"
#include "config/policy.h"
#include "redis/key_schema.h"

namespace {

using rl_test::Expected;

// The results of one batch, whichever call produced them.
struct Results {
  std::vector<rl_decision> decisions;
  std::vector<rl_status> statuses;
  std::vector<std::string> messages;  // "" for a request that did not fail
};

// rl_limiter_acquire_batch_each, which must accept the batch.
Results batch_each(rl_limiter* limiter, const std::vector<rl_request>& requests) {
  const size_t n = requests.size();
  Results r{std::vector<rl_decision>(n, rl_test::blank_decision()),
            std::vector<rl_status>(n, RL_E_INTERNAL), std::vector<std::string>(n)};
  std::vector<rl_error*> errors(n, reinterpret_cast<rl_error*>(&r));  // must be overwritten
  rl_error* err = nullptr;
  EXPECT_EQ(rl_limiter_acquire_batch_each(limiter, requests.data(), n, r.decisions.data(),
                                          r.statuses.data(), errors.data(), &err),
            RL_OK)
      << rl_error_message(err);
  rl_error_free(err);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(errors[i] == nullptr, r.statuses[i] == RL_OK) << "request " << i;
    EXPECT_EQ(rl_error_status(errors[i]), r.statuses[i]) << "request " << i;
    r.messages[i] = rl_error_message(errors[i]);
    rl_error_free(errors[i]);
  }
  return r;
}

// What the async callback saw, copied out while it ran.
struct Seen {
  std::mutex mutex;
  std::condition_variable done;
  int calls = 0;
  Results results;
};

void on_each(void* user, const rl_decision* decisions, const rl_status* statuses,
             const rl_error* const* errors, size_t count) {
  auto* seen = static_cast<Seen*>(user);
  std::lock_guard lock(seen->mutex);
  for (size_t i = 0; i < count; ++i) {
    seen->results.decisions.push_back(decisions[i]);
    seen->results.statuses.push_back(statuses[i]);
    EXPECT_EQ(errors[i] == nullptr, statuses[i] == RL_OK) << "request " << i;
    EXPECT_EQ(rl_error_status(errors[i]), statuses[i]) << "request " << i;
    seen->results.messages.emplace_back(rl_error_message(errors[i]));
  }
  ++seen->calls;
  seen->done.notify_all();
}

// rl_limiter_acquire_batch_each_async, which must start; waits for its one
// callback (a lost callback fails the test by ctest's timeout).
Results batch_each_async(rl_limiter* limiter, const std::vector<rl_request>& requests) {
  Seen seen;
  rl_error* err = nullptr;
  EXPECT_EQ(rl_limiter_acquire_batch_each_async(limiter, requests.data(), requests.size(),
                                                RL_DECISION_VERSION, on_each, &seen, &err),
            RL_OK)
      << rl_error_message(err);
  rl_error_free(err);
  std::unique_lock lock(seen.mutex);
  seen.done.wait(lock, [&] { return seen.calls > 0; });
  EXPECT_EQ(seen.calls, 1);
  return std::move(seen.results);
}

using BatchRunner = Results (*)(rl_limiter*, const std::vector<rl_request>&);
const BatchRunner kRunners[] = {batch_each, batch_each_async};

TEST(BatchEach, MemoryDecidesEveryRequest) {
  for (BatchRunner run : kRunners) {
    auto store = rl_test::open_manual_store();
    auto lim = rl_test::make_limiter(store.get(), {{"limit", "2/s"}});
    const std::string a = "a", b = "b";
    const std::vector<rl_request> reqs = {rl_test::request(a, 1), rl_test::request(b, 2),
                                          rl_test::request(a, 1), rl_test::request(a, 1)};
    const Results r = run(lim.get(), reqs);
    ASSERT_EQ(r.statuses.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(r.statuses[i], RL_OK) << i;
      EXPECT_EQ(r.messages[i], "") << i;
      EXPECT_EQ(r.decisions[i].version, uint32_t{RL_DECISION_VERSION});
    }
    EXPECT_TRUE(rl_test::decision_is(r.decisions[0], Expected{true, 2, 1, 0, 500000}));
    EXPECT_TRUE(rl_test::decision_is(r.decisions[1], Expected{true, 2, 0, 0, 1000000}));
    EXPECT_TRUE(rl_test::decision_is(r.decisions[2], Expected{true, 2, 0, 0, 1000000}));
    // A denial is a decision, not a failure.
    EXPECT_TRUE(rl_test::decision_is(r.decisions[3], Expected{false, 2, 0, 500000, 1000000}));
  }
}

TEST(BatchEach, ErrorsMayBeNull) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "2/s"}});
  const std::string a = "a";
  const rl_request req = rl_test::request(a, 1);
  rl_decision d = rl_test::blank_decision();
  rl_status status = RL_E_INTERNAL;
  ASSERT_EQ(rl_limiter_acquire_batch_each(lim.get(), &req, 1, &d, &status, nullptr, nullptr),
            RL_OK);
  EXPECT_EQ(status, RL_OK);
  EXPECT_TRUE(rl_test::decision_is(d, Expected{true, 2, 1, 0, 500000}));
}

// A malformed batch is the call's error, naming what is wrong, and decides
// nothing: statuses and errors are not written either.
::testing::AssertionResult refused_naming(rl_status got, rl_error* err, const std::string& name) {
  rl_test::ErrorPtr owned(err);
  const std::string message = rl_error_message(err);
  if (got != RL_E_INVALID_ARG || message.find(name) == std::string::npos) {
    return ::testing::AssertionFailure()
           << rl_status_name(got) << " '" << message << "', expected naming '" << name << "'";
  }
  return ::testing::AssertionSuccess();
}

void never_called(void*, const rl_decision*, const rl_status*, const rl_error* const*, size_t) {
  ADD_FAILURE() << "called back";
}

TEST(BatchEach, BadInputNamesWhatIsWrong) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  const std::string k = "k", empty;
  std::vector<rl_request> reqs = {rl_test::request(k, 1), rl_test::request(k, 1)};
  std::vector<rl_decision> ds(2, rl_test::blank_decision());
  std::vector<rl_status> statuses(2, RL_E_INTERNAL);
  rl_error* marker = reinterpret_cast<rl_error*>(&ds);
  std::vector<rl_error*> errors(2, marker);
  auto sync = [&](size_t count, const rl_request* r, rl_decision* d, rl_status* s) {
    rl_error* err = nullptr;
    const rl_status got =
        rl_limiter_acquire_batch_each(lim.get(), r, count, d, s, errors.data(), &err);
    return std::pair{got, err};
  };
  auto async = [&](const rl_request* r, size_t count, uint32_t version, rl_batch_each_callback cb) {
    rl_error* err = nullptr;
    const rl_status got =
        rl_limiter_acquire_batch_each_async(lim.get(), r, count, version, cb, nullptr, &err);
    return std::pair{got, err};
  };

  auto [s1, e1] = sync(0, reqs.data(), ds.data(), statuses.data());
  EXPECT_TRUE(refused_naming(s1, e1, "count"));
  auto [s2, e2] = sync(2, reqs.data(), ds.data(), nullptr);
  EXPECT_TRUE(refused_naming(s2, e2, "statuses"));
  auto [s3, e3] = sync(2, reqs.data(), nullptr, statuses.data());
  EXPECT_TRUE(refused_naming(s3, e3, "decisions"));
  auto [s4, e4] = sync(2, nullptr, ds.data(), statuses.data());
  EXPECT_TRUE(refused_naming(s4, e4, "requests"));
  reqs[1] = rl_test::request(empty, 1);
  auto [s5, e5] = sync(2, reqs.data(), ds.data(), statuses.data());
  EXPECT_TRUE(refused_naming(s5, e5, "requests[1].key"));
  auto [a5, ae5] = async(reqs.data(), 2, RL_DECISION_VERSION, never_called);
  EXPECT_TRUE(refused_naming(a5, ae5, "requests[1].key"));
  reqs[1] = rl_test::request(k, 0);
  auto [s6, e6] = sync(2, reqs.data(), ds.data(), statuses.data());
  EXPECT_TRUE(refused_naming(s6, e6, "requests[1].cost"));
  auto [a6, ae6] = async(reqs.data(), 2, RL_DECISION_VERSION, never_called);
  EXPECT_TRUE(refused_naming(a6, ae6, "requests[1].cost"));
  reqs[1] = rl_test::request(k, 1);
  auto [a7, ae7] = async(reqs.data(), 0, RL_DECISION_VERSION, never_called);
  EXPECT_TRUE(refused_naming(a7, ae7, "count"));
  auto [a8, ae8] = async(reqs.data(), 2, 0, never_called);
  EXPECT_TRUE(refused_naming(a8, ae8, "decision_version"));
  auto [a9, ae9] = async(reqs.data(), 2, RL_DECISION_VERSION, nullptr);
  EXPECT_TRUE(refused_naming(a9, ae9, "callback"));

  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(statuses[i], RL_E_INTERNAL) << "statuses[" << i << "] was written";
    EXPECT_EQ(errors[i], marker) << "errors[" << i << "] was written";
  }
  EXPECT_EQ(rl_test::peek(lim.get(), "k", 0).remaining, 10);  // nothing decided
}

TEST(BatchEach, ClosedStoreIsTheCallsFailure) {
  auto store = rl_test::open_manual_store();
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  rl_store_close(store.get());
  const std::string k = "k";
  const rl_request req = rl_test::request(k, 1);
  rl_decision d = rl_test::blank_decision();
  rl_status status = RL_E_INTERNAL;
  EXPECT_EQ(rl_limiter_acquire_batch_each(lim.get(), &req, 1, &d, &status, nullptr, nullptr),
            RL_E_SHUTDOWN);
  EXPECT_EQ(status, RL_E_INTERNAL);
  EXPECT_EQ(rl_limiter_acquire_batch_each_async(lim.get(), &req, 1, RL_DECISION_VERSION,
                                                never_called, nullptr, nullptr),
            RL_E_SHUTDOWN);
}

// Batches still pending when the store closes complete before close returns,
// once each, and each whole: all of its requests decided (and counted), or
// all RL_E_SHUTDOWN, never split by the close.
struct CloseCounts {
  std::atomic<int> calls{0}, decided{0}, shut_down{0}, other{0}, split{0};
};

void count_at_close(void* user, const rl_decision*, const rl_status* statuses,
                    const rl_error* const* errors, size_t count) {
  auto* c = static_cast<CloseCounts*>(user);
  size_t ok = 0;
  for (size_t i = 0; i < count; ++i) ok += statuses[i] == RL_OK ? 1 : 0;
  if (ok != 0 && ok != count) c->split++;
  for (size_t i = 0; i < count; ++i) {
    if (statuses[i] == RL_OK && errors[i] == nullptr) {
      c->decided++;
    } else if (statuses[i] == RL_E_SHUTDOWN && errors[i] != nullptr) {
      c->shut_down++;
    } else {
      c->other++;
    }
  }
  c->calls++;
}

TEST(BatchEach, CloseCompletesEveryPendingBatchOnce) {
  rl_store* raw = nullptr;
  ASSERT_EQ(rl_store_open("memory://?clock=manual", nullptr, &raw, nullptr), RL_OK);
  rl_test::StorePtr store(raw);
  auto lim = rl_test::make_limiter(store.get(), {{"limit", "1000000/1h"}});
  constexpr int kBatches = 500;
  const std::string a = "a", b = "b", c = "c";
  const std::vector<rl_request> reqs = {rl_test::request(a, 1), rl_test::request(b, 1),
                                        rl_test::request(c, 1)};
  CloseCounts counts;
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_EQ(
        rl_limiter_acquire_batch_each_async(lim.get(), reqs.data(), reqs.size(),
                                            RL_DECISION_VERSION, count_at_close, &counts, nullptr),
        RL_OK);
  }
  rl_store_close(store.get());
  EXPECT_EQ(counts.calls.load(), kBatches);
  EXPECT_EQ(counts.decided.load() + counts.shut_down.load(), 3 * kBatches);
  EXPECT_EQ(counts.other.load(), 0);
  EXPECT_EQ(counts.split.load(), 0);
  // Exactly the requests reported decided were counted.
  rl_store_stats stats = RL_STORE_STATS_INIT;
  ASSERT_EQ(rl_store_get_stats(store.get(), &stats, nullptr), RL_OK);
  EXPECT_EQ(stats.allowed[RL_SOURCE_STORE], uint64_t(counts.decided.load()));
}

// A redis:// limiter over the test server, under a prefix of its own.
struct RedisLimiter {
  std::string prefix = rl::test::unique_prefix();
  rl_test::StorePtr store;
  rl_test::LimiterPtr limiter;
  rl_test::SettingList settings;

  explicit RedisLimiter(rl_test::SettingList limiter_settings)
      : settings(std::move(limiter_settings)) {
    rl_store* s = nullptr;
    rl_error* err = nullptr;
    EXPECT_EQ(rl_store_open(rl::test::redis_url("", prefix).c_str(), nullptr, &s, &err), RL_OK)
        << rl_error_message(err);
    rl_error_free(err);
    store.reset(s);
    limiter = rl_test::make_limiter(s, settings);
  }

  // Makes key's Redis key a set, a type no script reads: its script fails.
  void break_key(const std::string& key) const {
    rl::Settings s;
    for (const auto& [k, v] : settings) s.set(k, v);
    const std::string redis_key = rl::redis::key_shape(prefix, rl::Policy::from(s)).key_for(key);
    rl::test::redis_cli("DEL '" + redis_key + "'");
    ASSERT_EQ(rl::test::redis_cli("SADD '" + redis_key + "' x"), "1\n");
  }
};

TEST(BatchEach, RedisRequestFailsAloneWhenItsKeyHoldsTheWrongType) {
  for (BatchRunner run : kRunners) {
    RedisLimiter redis(
        rl_test::SettingList{{"limit", "5/s"}, {"name", "each"}, {"on_failure", "open"}});
    redis.break_key("broken");
    const std::string a = "a", broken = "broken", b = "b";
    const Results r = run(redis.limiter.get(), {rl_test::request(a, 1), rl_test::request(broken, 1),
                                                rl_test::request(b, 2)});
    ASSERT_EQ(r.statuses.size(), 3u);
    EXPECT_EQ(r.statuses[0], RL_OK);
    EXPECT_EQ(r.decisions[0].allowed, 1);
    EXPECT_EQ(r.decisions[0].remaining, 4);
    // A script error is no outage: on_failure=open does not hide it.
    EXPECT_EQ(r.statuses[1], RL_E_BACKEND_ERROR);
    EXPECT_NE(r.messages[1].find("WRONGTYPE"), std::string::npos) << r.messages[1];
    EXPECT_EQ(r.decisions[1].allowed, 0);
    EXPECT_EQ(r.statuses[2], RL_OK);
    EXPECT_EQ(r.decisions[2].remaining, 3);
    EXPECT_EQ(r.decisions[2].source, RL_SOURCE_STORE);
  }
}

// Nothing listens on port 1: every call is an outage, at once.
struct DownLimiter {
  rl_test::StorePtr store;
  rl_test::LimiterPtr limiter;
  explicit DownLimiter(const rl_test::SettingList& settings) {
    rl_store* s = nullptr;
    rl_error* err = nullptr;
    EXPECT_EQ(rl_store_open("redis://127.0.0.1:1", nullptr, &s, &err), RL_OK)
        << rl_error_message(err);
    rl_error_free(err);
    store.reset(s);
    limiter = rl_test::make_limiter(s, settings);
  }
};

TEST(BatchEach, OutageFailsEveryRequestWithItsMessage) {
  for (BatchRunner run : kRunners) {
    DownLimiter down(rl_test::SettingList{{"limit", "5/s"}});
    const std::string a = "a", b = "b";
    const Results r = run(down.limiter.get(), {rl_test::request(a, 1), rl_test::request(b, 1)});
    ASSERT_EQ(r.statuses.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(r.statuses[i], RL_E_BACKEND_UNAVAILABLE) << i;
      EXPECT_NE(r.messages[i], "") << i;
      EXPECT_EQ(r.messages[i], r.messages[0]);
    }
  }
}

TEST(BatchEach, FailurePolicyDecidesEveryRequest) {
  for (BatchRunner run : kRunners) {
    DownLimiter open(rl_test::SettingList{{"limit", "5/s"}, {"on_failure", "open"}});
    DownLimiter local(
        rl_test::SettingList{{"limit", "2/s"}, {"on_failure", "local"}, {"local_share", "1/2"}});
    const std::string a = "a", b = "b";
    const Results o = run(open.limiter.get(), {rl_test::request(a, 1), rl_test::request(b, 1)});
    ASSERT_EQ(o.statuses.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(o.statuses[i], RL_OK) << i;
      EXPECT_EQ(o.decisions[i].allowed, 1) << i;
      EXPECT_EQ(o.decisions[i].source, RL_SOURCE_FAIL_OPEN) << i;
    }
    // The local fallback at half of 2/s: one unit per key and second.
    const Results l = run(local.limiter.get(),
                          {rl_test::request(a, 1), rl_test::request(a, 1), rl_test::request(b, 1)});
    ASSERT_EQ(l.statuses.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(l.statuses[i], RL_OK) << i;
      EXPECT_EQ(l.decisions[i].source, RL_SOURCE_LOCAL) << i;
    }
    EXPECT_EQ(l.decisions[0].allowed, 1);
    EXPECT_EQ(l.decisions[1].allowed, 0);
    EXPECT_EQ(l.decisions[2].allowed, 1);
  }
}

}  // namespace
