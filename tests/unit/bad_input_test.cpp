// Every C ABI function with bad input: the documented status, and an error
// whose message names the argument or setting. Never a crash.
#include <cstring>
#include <functional>

#include "capi_helpers.h"

namespace {

using Call = std::function<rl_status(rl_error**)>;

// Runs `call` twice: with an error out-parameter (status and message are
// checked) and with err = NULL (the status alone).
::testing::AssertionResult fails_naming(const Call& call, const std::string& name,
                                        rl_status want = RL_E_INVALID_ARG) {
  rl_error* err = nullptr;
  const rl_status got = call(&err);
  rl_test::ErrorPtr owned(err);
  const std::string message = rl_error_message(err);
  if (got != want || rl_error_status(err) != want || message.find(name) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "status " << rl_status_name(got) << " message '" << message << "', expected "
           << rl_status_name(want) << " naming '" << name << "'";
  }
  if (call(nullptr) != want) return ::testing::AssertionFailure() << "differs with err = NULL";
  return ::testing::AssertionSuccess();
}

rl_status set(rl_config* cfg, const char* key, const char* value, rl_error** err) {
  return rl_config_set(cfg, key, value, err);
}

TEST(BadInput, ConfigSetNamesTheSetting) {
  rl_config* cfg = rl_config_new();
  EXPECT_TRUE(fails_naming([&](rl_error** e) { return set(nullptr, "limit", "1/s", e); }, "cfg"));
  EXPECT_TRUE(fails_naming([&](rl_error** e) { return set(cfg, nullptr, "1/s", e); }, "key"));
  EXPECT_TRUE(fails_naming([&](rl_error** e) { return set(cfg, "limit", nullptr, e); }, "limit"));
  EXPECT_TRUE(fails_naming([&](rl_error** e) { return set(cfg, "colour", "red", e); }, "colour"));
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"limit", "100/"},     {"limit", "/1m"},
      {"limit", "1e999/s"},  {"limit", "10/fortnight"},
      {"limit", "0/s"},      {"limit", "-1/s"},
      {"limit", ""},         {"limit", "nan/s"},
      {"limit", "inf/s"},    {"limit", "10/0s"},
      {"limit", "10"},       {"limit", "2000000000000/s"},
      {"burst", "0"},        {"burst", "-3"},
      {"burst", "abc"},      {"algorithm", "leaky"},
      {"granularity", "0s"}, {"name", "a:b"},
      {"name", ""},          {"clock", "wall"},
      {"timeout_ms", "0"},   {"timeout_ms", "1.5"},
  };
  for (const auto& [key, value] : bad) {
    EXPECT_TRUE(fails_naming([&](rl_error** e) { return set(cfg, key, value, e); }, key))
        << key << " = '" << value << "'";
  }
  rl_config_free(cfg);
}

TEST(BadInput, ConflictingLimiterSettingsNameTheSetting) {
  auto store = rl_test::open_manual_store();
  const std::vector<std::pair<rl_test::SettingList, std::string>> bad = {
      {{{"algorithm", "sliding_log"}, {"limit", "1/s"}, {"burst", "5"}}, "burst"},
      {{{"limit", "1/s, 2/m"}, {"burst", "5"}}, "burst"},
      {{{"algorithm", "gcra"}, {"limit", "1/s"}, {"granularity", "1s"}}, "granularity"},
      {{{"algorithm", "sliding_window"}, {"limit", "1/s"}, {"granularity", "300ms"}},
       "granularity"},
      {{{"algorithm", "sliding_window"}, {"limit", "1/s"}, {"granularity", "1us"}}, "granularity"},
      {{{"algorithm", "gcra"}}, "limit"},
      {{{"limit", "1/s"}, {"clock", "manual"}}, "clock"},
  };
  for (const auto& [settings, name] : bad) {
    rl_config* cfg = rl_config_new();
    for (const auto& [k, v] : settings) ASSERT_EQ(set(cfg, k.c_str(), v.c_str(), nullptr), RL_OK);
    rl_limiter* lim = nullptr;
    EXPECT_TRUE(fails_naming(
        [&](rl_error** e) { return rl_limiter_new(store.get(), cfg, &lim, e); }, name));
    EXPECT_EQ(lim, nullptr);
    rl_config_free(cfg);
  }
}

TEST(BadInput, StoreOpenAndClock) {
  rl_store* s = nullptr;
  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_store_open(nullptr, nullptr, &s, e); }, "url"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_store_open("memory://", nullptr, nullptr, e); }, "out"));
  for (const char* url : {"", "memory", "nothing://", "memory://host", "memory://?colour=red",
                          "memory://?clock=wall"}) {
    EXPECT_TRUE(fails_naming([&](rl_error** e) { return rl_store_open(url, nullptr, &s, e); },
                             std::strstr(url, "clock=") ? "clock" : "url"))
        << url;
  }
  rl_config* limiter_setting = rl_config_new();
  ASSERT_EQ(set(limiter_setting, "limit", "1/s", nullptr), RL_OK);
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_store_open("memory://", limiter_setting, &s, e); }, "limit"));
  rl_config_free(limiter_setting);

  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_store_clock_set(nullptr, 1, e); }, "store"));
  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_store_clock_advance(nullptr, 1, e); }, "store"));
  auto manual = rl_test::open_manual_store();
  ASSERT_EQ(rl_store_clock_set(manual.get(), 100, nullptr), RL_OK);
  EXPECT_TRUE(fails_naming([&](rl_error** e) { return rl_store_clock_set(manual.get(), 99, e); },
                           "now_us"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_store_clock_advance(manual.get(), -1, e); }, "delta_us"));
  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_store_clock_advance(manual.get(), INT64_MAX, e); },
                   "delta_us"));
  rl_store* monotonic = nullptr;
  ASSERT_EQ(rl_store_open("memory://", nullptr, &monotonic, nullptr), RL_OK);
  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_store_clock_advance(monotonic, 1, e); }, "clock"));
  rl_store_free(monotonic);
}

class BadRequest : public ::testing::Test {
 protected:
  rl_test::StorePtr store = rl_test::open_manual_store();
  rl_test::LimiterPtr lim = rl_test::make_limiter(store.get(), {{"limit", "10/s"}});
  std::string key = "k";
  rl_request req = rl_test::request(key, 1);
  rl_decision d = rl_test::blank_decision();
};

TEST_F(BadRequest, LimiterNewNamesItsArgument) {
  rl_config* cfg = rl_config_new();
  ASSERT_EQ(set(cfg, "limit", "1/s", nullptr), RL_OK);
  rl_limiter* out = nullptr;
  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_limiter_new(nullptr, cfg, &out, e); }, "store"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_new(store.get(), nullptr, &out, e); }, "cfg"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_new(store.get(), cfg, nullptr, e); }, "out"));
  rl_config_free(cfg);
}

TEST_F(BadRequest, SyncCallsNameTheBadArgument) {
  using Op = rl_status (*)(rl_limiter*, const rl_request*, rl_decision*, rl_error**);
  for (Op op : {Op{rl_limiter_acquire}, Op{rl_limiter_peek}, Op{rl_limiter_refund}}) {
    const auto with = [&](rl_limiter* l, const rl_request* r, rl_decision* dd) {
      return [=](rl_error** e) { return op(l, r, dd, e); };
    };
    EXPECT_TRUE(fails_naming(with(nullptr, &req, &d), "limiter"));
    EXPECT_TRUE(fails_naming(with(lim.get(), nullptr, &d), "request"));
    for (uint32_t version : {0u, RL_REQUEST_VERSION + 1u}) {
      rl_request r = req;
      r.version = version;
      EXPECT_TRUE(fails_naming(with(lim.get(), &r, &d), "request.version"));
    }
    for (uint32_t version : {0u, RL_DECISION_VERSION + 1u}) {
      rl_decision dd = d;
      dd.version = version;
      EXPECT_TRUE(fails_naming(with(lim.get(), &req, &dd), "decision.version"));
    }
    rl_request r = req;
    r.key = nullptr;
    EXPECT_TRUE(fails_naming(with(lim.get(), &r, &d), "request.key"));
    r = req;
    r.key_len = 0;
    EXPECT_TRUE(fails_naming(with(lim.get(), &r, &d), "key"));
    const std::string long_key(RL_MAX_KEY_LEN + 1, 'x');
    r = rl_test::request(long_key, 1);
    EXPECT_TRUE(fails_naming(with(lim.get(), &r, &d), "key"));
    for (int64_t cost : {int64_t{-1}, (int64_t{1} << 40) + 1, INT64_MAX, INT64_MIN}) {
      r = rl_test::request(key, cost);
      EXPECT_TRUE(fails_naming(with(lim.get(), &r, &d), "cost")) << cost;
    }
    if (op != rl_limiter_peek) {  // a peek of cost 0 asks for the state itself
      r = rl_test::request(key, 0);
      EXPECT_TRUE(fails_naming(with(lim.get(), &r, &d), "cost"));
    }
  }
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire(lim.get(), &req, nullptr, e); }, "decision"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_peek(lim.get(), &req, nullptr, e); }, "decision"));
  EXPECT_EQ(rl_limiter_refund(lim.get(), &req, nullptr, nullptr),
            RL_OK);  // its decision is optional
}

TEST_F(BadRequest, ResetWaitAndBatchNameTheBadArgument) {
  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_limiter_reset(nullptr, "k", 1, e); }, "limiter"));
  EXPECT_TRUE(fails_naming([&](rl_error** e) { return rl_limiter_reset(lim.get(), nullptr, 1, e); },
                           "key"));
  EXPECT_TRUE(
      fails_naming([&](rl_error** e) { return rl_limiter_reset(lim.get(), "", 0, e); }, "key"));

  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_wait(lim.get(), &req, -1, &d, e); },
      "timeout"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_wait(lim.get(), nullptr, 0, &d, e); },
      "request"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_wait(lim.get(), &req, 0, nullptr, e); },
      "decision"));

  const std::string empty;
  rl_request reqs[2] = {req, rl_test::request(empty, 1)};
  rl_decision ds[2] = {d, d};
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), reqs, 0, ds, e); }, "count"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), nullptr, 2, ds, e); },
      "requests"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), reqs, 2, ds, e); },
      "requests[1].key"));
  reqs[1] = req;
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), reqs, 2, nullptr, e); },
      "decisions"));
  ds[1].version = 0;
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), reqs, 2, ds, e); },
      "decisions[1]"));
  // Nothing was decided by the failed batches.
  EXPECT_EQ(rl_test::peek(lim.get(), "k", 0).remaining, 10);
}

void never_called(void*, rl_status, const rl_decision*, const rl_error*) {
  ADD_FAILURE() << "called back";
}

TEST_F(BadRequest, AsyncCallsFailAtOnceAndNeverCallBack) {
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) {
        return rl_limiter_acquire_async(nullptr, &req, never_called, nullptr, e);
      },
      "limiter"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return rl_limiter_acquire_async(lim.get(), &req, nullptr, nullptr, e); },
      "callback"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) {
        return rl_limiter_acquire_async(lim.get(), nullptr, never_called, nullptr, e);
      },
      "request"));
  // A C caller may pass any int as the op: call it as C would, with an int.
  using CallAsync =
      rl_status (*)(rl_limiter*, int, const rl_request*, rl_callback, void*, rl_error**);
  const auto call_async = reinterpret_cast<CallAsync>(rl_limiter_call_async);
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) { return call_async(lim.get(), 9, &req, never_called, nullptr, e); },
      "op"));
  rl_request zero = rl_test::request(key, 0);
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) {
        return rl_limiter_acquire_async(lim.get(), &zero, never_called, nullptr, e);
      },
      "cost"));
  EXPECT_TRUE(fails_naming(
      [&](rl_error** e) {
        return rl_limiter_acquire_batch_async(lim.get(), &req, 0, nullptr, nullptr, e);
      },
      "callback"));
  store.reset();  // drains rl's thread: a stray callback would have run by now
}

// Async calls and batches copy keys: the length is checked before any byte
// is read, so a key_len past the buffer is refused, never read (ASan).
TEST_F(BadRequest, KeyLengthIsCheckedBeforeTheKeyIsRead) {
  const std::string buffer(600, 'k');
  for (size_t len : {size_t{4096}, size_t{256} << 20, SIZE_MAX}) {
    rl_request r = rl_test::request(buffer, 1);
    r.key_len = len;
    EXPECT_TRUE(fails_naming(
        [&](rl_error** e) {
          return rl_limiter_acquire_async(lim.get(), &r, never_called, nullptr, e);
        },
        "request.key"))
        << len;
    EXPECT_TRUE(fails_naming([&](rl_error** e) { return rl_limiter_acquire(lim.get(), &r, &d, e); },
                             "request.key"))
        << len;
    EXPECT_TRUE(fails_naming(
        [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), &r, 1, &d, e); },
        "requests[0].key"))
        << len;
    EXPECT_TRUE(
        fails_naming([&](rl_error** e) { return rl_limiter_acquire_wait(lim.get(), &r, 0, &d, e); },
                     "request.key"))
        << len;
  }
  store.reset();
}

TEST_F(BadRequest, HugeBatchCountIsBadInputNotInternal) {
  for (size_t count : {size_t{RL_MAX_BATCH} + 1, SIZE_MAX / sizeof(rl_request), SIZE_MAX}) {
    EXPECT_TRUE(fails_naming(
        [&](rl_error** e) { return rl_limiter_acquire_batch(lim.get(), &req, count, &d, e); },
        "count"))
        << count;
    EXPECT_TRUE(fails_naming(
        [&](rl_error** e) {
          return rl_limiter_acquire_batch_async(
              lim.get(), &req, count,
              [](void*, rl_status, const rl_decision*, size_t, const rl_error*) {
                ADD_FAILURE() << "called back";
              },
              nullptr, e);
        },
        "count"))
        << count;
  }
  store.reset();
}

// What a message may show of its input: a bounded prefix, escaped.
TEST(BadInput, MessagesQuoteABoundedEscapedPrefix) {
  rl_config* cfg = rl_config_new();
  const std::string huge(1 << 20, 'x');
  const std::string control = "10/\x01\n\x1b[31ms";
  for (const std::string& value : {huge, control}) {
    rl_error* err = nullptr;
    EXPECT_EQ(rl_config_set(cfg, "limit", value.c_str(), &err), RL_E_INVALID_ARG);
    const std::string message = rl_error_message(err);
    EXPECT_LT(message.size(), 300u) << message.substr(0, 300);
    for (unsigned char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << message;
    rl_error_free(err);
  }
  rl_config_free(cfg);
}

TEST(BadInput, NullIsHarmlessWhereDocumented) {
  EXPECT_EQ(rl_status_name(-1), nullptr);
  EXPECT_EQ(rl_status_name(RL_STATUS_COUNT), nullptr);
  EXPECT_STREQ(rl_status_name(RL_E_SHUTDOWN), "RL_E_SHUTDOWN");
  EXPECT_EQ(rl_error_status(nullptr), RL_OK);
  EXPECT_STREQ(rl_error_message(nullptr), "");
  EXPECT_EQ(rl_config_describe(1000, nullptr), nullptr);
  rl_error_free(nullptr);
  rl_config_free(nullptr);
  rl_store_close(nullptr);
  rl_store_free(nullptr);
  rl_limiter_free(nullptr);
}

}  // namespace
