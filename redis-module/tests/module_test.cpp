// librl_redis.so on a real redis-server (scripts/with-redis with
// RL_TEST_REDIS_MODULE set; run by scripts/test's `module` suite): the module
// and the Lua Functions library decide alike on the same keys, call by call,
// a key written by one read by the other; bad input is an error reply, never
// a crash; a replica and an AOF reload hold the primary's state.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::pair<const char*, const char*> kLibrary = {
#include "redis_library.inc"
};

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

class Client {
 public:
  explicit Client(const char* env) {
    const char* url = std::getenv(env);
    if (!url)
      throw std::runtime_error(std::string(env) +
                               " is not set (scripts/with-redis with "
                               "RL_TEST_REDIS_MODULE=<librl_redis.so>)");
    const std::string u = url;
    const size_t colon = u.rfind(':');
    ctx_ = redisConnect("127.0.0.1", std::stoi(u.substr(colon + 1)));
    if (!ctx_ || ctx_->err) throw std::runtime_error(std::string("cannot connect to ") + url);
  }
  ~Client() { redisFree(ctx_); }

  ReplyPtr run(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (!r) throw std::runtime_error("connection lost: the server died?");
    return ReplyPtr(r);
  }
  std::string text(const std::vector<std::string>& args) { return show(run(args).get()); }
  // The next message pushed to a subscribed connection.
  ReplyPtr next() {
    void* r = nullptr;
    if (redisGetReply(ctx_, &r) != REDIS_OK || !r) throw std::runtime_error("connection lost");
    return ReplyPtr(static_cast<redisReply*>(r));
  }

  static std::string show(const redisReply* r) {
    switch (r->type) {
      case REDIS_REPLY_INTEGER: return std::to_string(r->integer);
      case REDIS_REPLY_NIL: return "(nil)";
      case REDIS_REPLY_ERROR: return "(error) " + std::string(r->str, r->len);
      case REDIS_REPLY_ARRAY: {
        std::string out = "[";
        for (size_t i = 0; i < r->elements; ++i) out += (i ? " " : "") + show(r->element[i]);
        return out + "]";
      }
      default: return std::string(r->str, r->len);
    }
  }

 private:
  redisContext* ctx_;
};

// A key's value whatever its type: a string, or a list's elements in hex.
std::string value_of(Client& redis, const std::string& key) {
  const ReplyPtr type = redis.run({"TYPE", key});
  if (std::string(type->str) != "list") return redis.text({"GET", key});
  const ReplyPtr all = redis.run({"LRANGE", key, "0", "-1"});
  std::string out = "list";
  for (size_t i = 0; i < all->elements; ++i) {
    out += ' ';
    for (size_t b = 0; b < all->element[i]->len; ++b) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto c = static_cast<unsigned char>(all->element[i]->str[b]);
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string fn(const std::string& algorithm, const std::string& op) {
  return std::string(kLibrary.first) + "_" + algorithm + "_" + op;
}

struct Config {
  const char* algorithm;
  const char* limits;  // the limits argument, min_ttl 0 (absolute expiries)
  int64_t step_us;     // the largest time step between calls
};

// limit window burst lr wr g, per limit.
const Config kConfigs[] = {
    {"gcra", "0 10 1000000 10 1 100000 0", 150000},
    {"gcra", "0 3 1000000 7 3 1000000 0", 400000},  // fractional, burst
    {"gcra", "0 5 1000000 5 1 200000 0 20 60000000 20 1 3000000 0", 300000},
    {"token_bucket", "0 10 1000000 10 1 100000 0", 150000},
    {"token_bucket", "0 3 1000000 7 3 1000000 0", 400000},
    {"token_bucket", "0 5 1000000 5 1 200000 0 20 60000000 20 1 3000000 0", 300000},
    {"fixed_window", "0 10 1000000 10 1 100000 0", 150000},
    {"fixed_window", "0 5 1000000 5 1 200000 0 20 60000000 20 1 3000000 0", 300000},
    {"sliding_window", "0 10 1000000 10 1 100000 100000", 150000},
    {"sliding_window", "0 5 1000000 5 1 200000 1000000 20 60000000 20 1 3000000 6000000", 300000},
    {"sliding_log", "0 10 1000000 10 1 100000 0", 150000},
    {"sliding_log", "0 5 1000000 5 1 200000 0 20 60000000 20 1 3000000 0", 300000},
    // Logs of up to about 100 entries: reads far apart in the list (the
    // module reopens the key to seek afresh), denials searching for the
    // entry that frees enough.
    {"sliding_log", "0 200 1000000 200 1 5000 0", 8000},
    {"sliding_log", "0 100 1000000 100 1 10000 0 300 10000000 300 3 100000 0", 8000},
    {"suppressed", "0 10 1000000 30 1 100000 100000", 60000},
    {"suppressed", "0 5 2000000 15 1 400000 200000 20 60000000 60 1 3000000 1000000", 300000},
};

class ModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<Client>("RL_TEST_REDIS_MODULE_URL");
    const std::string loaded = redis_->text({"FUNCTION", "LOAD", "REPLACE", kLibrary.second});
    ASSERT_EQ(loaded, kLibrary.first);
    // Manual times an hour ahead of the server's: absolute expiries stay in
    // the future, so both paths keep their keys.
    const ReplyPtr t = redis_->run({"TIME"});
    start_ = std::stoll(t->element[0]->str) * 1000000 + 3600000000LL;
  }
  std::unique_ptr<Client> redis_;
  int64_t start_ = 0;
};

std::string cost_arg(const Config& c, int64_t cost, std::mt19937_64& rng) {
  if (std::string(c.algorithm) != "suppressed") return std::to_string(cost);
  return std::to_string(cost) + " " + std::to_string(rng() % (1 << 24)) + " 250000";
}

// One random call of the tests that run both paths side by side: the next
// instant, the operation (mostly acquires) and its cost argument.
struct RandomCall {
  std::string op, at, amount;
  std::string where(const Config& c, int step) const {
    return std::string(c.algorithm) + " " + c.limits + " step " + std::to_string(step) + " " + op +
           " cost " + amount;
  }
};

RandomCall random_call(const Config& c, int64_t& now, std::mt19937_64& rng) {
  now += static_cast<int64_t>(rng() % (c.step_us + 1));
  const int pick = static_cast<int>(rng() % 100);
  const char* op = pick < 70 ? "acquire" : pick < 82 ? "peek" : pick < 96 ? "refund" : "reset";
  const int64_t cost = rng() % 20 == 0 ? 40 : 1 + static_cast<int64_t>(rng() % 3);
  return {op, std::to_string(now), cost_arg(c, cost, rng)};
}

// Key `lua` only ever sees the Lua library; key `mixed` alternates module
// and Lua call by call, and `module` only the module: every reply, every
// value and every expiry instant must agree.
TEST_F(ModuleTest, AlternatingWithLuaCallByCallDecidesAndStoresAlike) {
  std::mt19937_64 rng(21);
  int config_index = 0;
  for (const Config& c : kConfigs) {
    const std::string tag = "{eq" + std::to_string(config_index++) + "}";
    const std::string lua = tag + "lua", mixed = tag + "mixed", native = tag + "module";
    redis_->run({"DEL", lua, mixed, native});
    int64_t now = start_;
    for (int step = 0; step < 400; ++step) {
      const RandomCall call = random_call(c, now, rng);
      const std::string &op = call.op, &at = call.at, &amount = call.amount;
      const std::string command = std::string("RL.") + op;
      const std::string by_lua =
          redis_->text({"FCALL", fn(c.algorithm, op), "1", lua, at, amount, c.limits});
      const std::string by_module =
          redis_->text({command, native, c.algorithm, at, amount, c.limits});
      const std::string by_mixed =
          step % 2 ? redis_->text({command, mixed, c.algorithm, at, amount, c.limits})
                   : redis_->text({"FCALL", fn(c.algorithm, op), "1", mixed, at, amount, c.limits});
      const std::string where = call.where(c, step);
      ASSERT_EQ(by_module, by_lua) << where;
      ASSERT_EQ(by_mixed, by_lua) << where;
      const std::string value = value_of(*redis_, lua);
      ASSERT_EQ(value_of(*redis_, native), value) << where;
      ASSERT_EQ(value_of(*redis_, mixed), value) << where;
      const std::string expiry = redis_->text({"PEXPIRETIME", lua});
      ASSERT_EQ(redis_->text({"PEXPIRETIME", native}), expiry) << where;
      ASSERT_EQ(redis_->text({"PEXPIRETIME", mixed}), expiry) << where;
    }
  }
}

// The server's clock ('' for now): the same instant source as the Lua
// path's TIME, and keys that expire at the same absolute instant.
TEST_F(ModuleTest, ServerClockExpiresLikeLua) {
  const char* limits = "0 10 1000000 10 1 100000 0";
  redis_->run({"DEL", "{clock}lua", "{clock}module"});
  const std::string by_lua =
      redis_->text({"FCALL", fn("gcra", "acquire"), "1", "{clock}lua", "", "1", limits});
  const std::string r = redis_->text({"RL.ACQUIRE", "{clock}module", "gcra", "", "1", limits});
  EXPECT_EQ(r, by_lua);  // allowed, 9 remaining, reset after 100 ms: no instant in it
  const int64_t lua_at = redis_->run({"PEXPIRETIME", "{clock}lua"})->integer;
  const int64_t module_at = redis_->run({"PEXPIRETIME", "{clock}module"})->integer;
  EXPECT_GT(module_at, 0);
  EXPECT_LE(std::llabs(module_at - lua_at), 50);  // two calls, moments apart
}

// RL.BATCH decides each call as if alone: the same replies as the Lua batch.
TEST_F(ModuleTest, BatchRepliesAsTheLuaBatch) {
  redis_->run({"DEL", "{b}lua", "{b}module"});
  const std::string at = std::to_string(start_);
  const char* limits = "0 2 1000000 2 1 500000 0";
  std::vector<std::string> lua = {"FCALL", std::string(kLibrary.first) + "_batch", "4"};
  std::vector<std::string> module = {"RL.BATCH"};
  const char* ops[] = {"gcra_acquire", "gcra_acquire", "gcra_acquire", "gcra_peek"};
  for (int i = 0; i < 4; ++i) lua.push_back("{b}lua");
  for (const char* op : ops) {  // the Lua batch's full form: <op>_full, now, cost, limits
    for (const std::string& a :
         {std::string(op) + "_full", at, std::string("1"), std::string(limits)}) {
      lua.push_back(a);
    }
    for (const std::string& a :
         {std::string("{b}module"), std::string(op), at, std::string("1"), std::string(limits)}) {
      module.push_back(a);
    }
  }
  EXPECT_EQ(redis_->text(module), redis_->text(lua));
  EXPECT_EQ(redis_->text({"GET", "{b}module"}), redis_->text({"GET", "{b}lua"}));
  // Usual calls (the server's clock, cost 1): the Lua batch's group of one
  // name and limits, then only keys; RL.BATCH with every argument. Each
  // batch runs at one instant: the same replies, no instant in them.
  redis_->run({"DEL", "{u}lua", "{u}module"});
  const std::string usual =
      redis_->text({"FCALL", std::string(kLibrary.first) + "_batch", "3", "{u}lua", "{u}lua",
                    "{u}lua", "gcra_acquire", limits, "3"});
  EXPECT_EQ(
      redis_->text({"RL.BATCH", "{u}module", "gcra_acquire", "", "1", limits, "{u}module",
                    "gcra_acquire", "", "1", limits, "{u}module", "gcra_acquire", "", "1", limits}),
      usual);
  // One bad call is its own error; the others still run.
  const std::string mixed = redis_->text(
      {"RL.BATCH", "{b}x", "gcra_nope", at, "1", limits, "{b}x", "gcra_peek", at, "1", limits});
  EXPECT_EQ(mixed.rfind("[(error) ERR rl: operation: 'nope' is unknown", 0), 0u) << mixed;
  const std::string alone = redis_->text({"RL.PEEK", "{b}x", "gcra", at, "1", limits});
  EXPECT_EQ(mixed.substr(mixed.size() - alone.size() - 2), " " + alone + "]");
}

// Bad input of every kind: an error reply naming what was wrong, and the
// server still answers.
TEST_F(ModuleTest, BadInputIsAnErrorNamingItNeverACrash) {
  const std::string at = std::to_string(start_);
  const char* limits = "0 10 1000000 10 1 100000 0";
  redis_->run({"DEL", "{bad}k"});
  redis_->run({"LPUSH", "{bad}list", "x"});
  struct Case {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"RL.ACQUIRE", "{bad}k", "gcra", at, "1"}, "wrong number of arguments"},
      {{"RL.ACQUIRE", "{bad}k", "lru", at, "1", limits}, "algorithm: 'lru' is unknown"},
      {{"RL.ACQUIRE", "{bad}k", "gcra", "soon", "1", limits}, "now: 'soon' is not an integer"},
      {{"RL.ACQUIRE", "{bad}k", "gcra", at, "-1", limits}, "cost: -1 is outside"},
      {{"RL.ACQUIRE", "{bad}k", "gcra", at, "1", "0 10"}, "limits: '0 10' is not"},
      {{"RL.ACQUIRE", "{bad}k", "gcra", at, "1", "0 10 0 10 1 0 0"}, "window_us: 0 is outside"},
      {{"RL.ACQUIRE", "{bad}k", "sliding_window", at, "1", "0 10 1000000 10 10 1000000 7"},
       "limits: limit 1: limit_reduced"},
      {{"RL.ACQUIRE", "{bad}k", "sliding_window", at, "1", "0 10 1000000 10 1 100000 7"},
       "granularity_us: 7 must divide"},
      {{"RL.ACQUIRE", "{bad}k", "suppressed", at, "1", "0 10 1000000 30 1 100000 100000"},
       "is not '<cost> <draw> <factor_reuse_us>'"},
      {{"RL.ACQUIRE", "{bad}list", "gcra", at, "1", limits}, "WRONGTYPE"},
      {{"RL.BATCH", "{bad}k", "gcra_acquire", at, "1"}, "wrong number of arguments"},
  };
  for (const Case& c : cases) {
    const std::string reply = redis_->text(c.args);
    EXPECT_NE(reply.find("(error)"), std::string::npos) << reply;
    EXPECT_NE(reply.find(c.says), std::string::npos) << reply << " should say " << c.says;
  }
  // Corrupt values, each algorithm: an error, the value left as it was.
  const char* corrupt[] = {
      "",          " ",   "x",   "1 ", "-5", "1 2 3 4 5 6 7 8 9", "99999999999999999999",
      "3 1 1 1 1", "1e3", "1  2"};
  for (const Config& c : kConfigs) {
    for (const char* value : corrupt) {
      redis_->run({"SET", "{bad}v", value});
      for (const char* op : {"RL.ACQUIRE", "RL.PEEK", "RL.REFUND"}) {
        const std::string reply = redis_->text({op, "{bad}v", c.algorithm, at, "1 5 0", c.limits});
        if (std::string(c.algorithm) != "suppressed") {
          redis_->text({op, "{bad}v", c.algorithm, at, "1", c.limits});
        }
        EXPECT_EQ(redis_->text({"GET", "{bad}v"}), value);
        (void)reply;
      }
    }
  }
  // A sliding_log list with an entry that is not 24 bytes, or totals that
  // do not add up: an error, the list left as it was.
  const std::string good(24, '\0');
  std::string bad_total = good;
  bad_total[8] = 5;  // cost 5, total 0
  for (const std::string& entry : {std::string("short"), bad_total}) {
    redis_->run({"DEL", "{bad}log"});
    redis_->run({"RPUSH", "{bad}log", good, entry});
    const std::string reply =
        redis_->text({"RL.ACQUIRE", "{bad}log", "sliding_log", at, "1", limits});
    EXPECT_NE(reply.find("ERR rl: corrupt value"), std::string::npos) << reply;
    EXPECT_EQ(redis_->run({"LLEN", "{bad}log"})->integer, 2);
  }
  // A batch above the limit is refused whole.
  std::vector<std::string> big = {"RL.BATCH"};
  for (int i = 0; i < 1001; ++i) {
    for (const std::string& a : {std::string("{bad}k"), std::string("gcra_peek"), at,
                                 std::string("1"), std::string(limits)}) {
      big.push_back(a);
    }
  }
  EXPECT_NE(redis_->text(big).find("at most 1000 in one RL.BATCH"), std::string::npos);
  EXPECT_EQ(redis_->text({"PING"}), "PONG");
}

// Keyspace notifications: a module call that changes a key (its value or
// its expiry) announces it; a sliding_log list announces exactly the events of the Lua path's list
// commands (rpush, lset, ltrim, rpop, del, expire). The string states
// announce `set`/`expire`/`del`, the commands the module replicates (the
// Lua path may reach the same value by INCRBY and DECRBY).
TEST_F(ModuleTest, KeyspaceEventsAnnounceEveryChange) {
  const std::string was = redis_->run({"CONFIG", "GET", "notify-keyspace-events"})->element[1]->str;
  redis_->run({"CONFIG", "SET", "notify-keyspace-events", "KA"});
  Client events("RL_TEST_REDIS_MODULE_URL");
  events.run({"PSUBSCRIBE", "__keyspace@0__:{ev*"});
  // The events of each key since the last call, up to a marker.
  auto take = [&] {
    redis_->run({"PUBLISH", "__keyspace@0__:{ev}mark", "mark"});
    std::map<std::string, std::string> seen;
    for (;;) {
      const ReplyPtr m = events.next();
      const std::string channel = m->element[2]->str;
      const std::string key = channel.substr(channel.find(':') + 1);
      if (key == "{ev}mark") return seen;
      seen[key] += std::string(m->element[3]->str) + " ";
    }
  };
  std::mt19937_64 rng(5);
  int config_index = 0;
  for (const Config& c : kConfigs) {
    const std::string tag = "{ev" + std::to_string(config_index++) + "}";
    const std::string lua = tag + "lua", native = tag + "module";
    const bool list = std::string(c.algorithm) == "sliding_log";
    int64_t now = start_;
    for (int step = 0; step < 200; ++step) {
      const RandomCall call = random_call(c, now, rng);
      const std::string &op = call.op, &at = call.at, &amount = call.amount;
      const std::string before = value_of(*redis_, native) + redis_->text({"PEXPIRETIME", native});
      take();
      redis_->run({"FCALL", fn(c.algorithm, op), "1", lua, at, amount, c.limits});
      redis_->run({std::string("RL.") + op, native, c.algorithm, at, amount, c.limits});
      std::map<std::string, std::string> seen = take();
      const std::string after = value_of(*redis_, native) + redis_->text({"PEXPIRETIME", native});
      const std::string where = call.where(c, step);
      if (after != before) {
        EXPECT_FALSE(seen[native].empty()) << where;
      }
      if (list) {
        EXPECT_EQ(seen[native], seen[lua]) << where;
      }
    }
  }
  redis_->run({"CONFIG", "SET", "notify-keyspace-events", was});
}

// The module replicates effects (SET ... PXAT, DEL), never itself: its
// replica, and the replica's AOF reloaded, hold exactly the primary's keys.
TEST_F(ModuleTest, ReplicaAndAofReloadHoldThePrimarysState) {
  Client replica("RL_TEST_REDIS_MODULE_REPLICA_URL");
  std::mt19937_64 rng(7);
  std::vector<std::string> keys;
  int64_t now = start_;
  for (const Config& c : kConfigs) {
    const std::string key = "{repl}" + std::to_string(keys.size());
    keys.push_back(key);
    for (int i = 0; i < 50; ++i) {
      now += static_cast<int64_t>(rng() % (c.step_us + 1));
      const char* op = i % 10 == 9 ? "RL.REFUND" : i == 37 ? "RL.RESET" : "RL.ACQUIRE";
      redis_->run({op, key, c.algorithm, std::to_string(now), cost_arg(c, 1, rng), c.limits});
    }
  }
  // One on the server's clock too: the replica must not read its own.
  redis_->run({"RL.ACQUIRE", "{repl}clock", "gcra", "", "1", "0 10 3600000000 10 1 360000000 0"});
  keys.push_back("{repl}clock");
  ASSERT_EQ(redis_->run({"WAIT", "1", "10000"})->integer, 1);
  auto snapshot = [&](Client& on) {
    std::string out;
    for (const std::string& k : keys) {
      out += k + "=" + value_of(on, k) + "@" + on.text({"PEXPIRETIME", k}) + "\n";
    }
    return out;
  };
  const std::string primary = snapshot(*redis_);
  EXPECT_EQ(snapshot(replica), primary);
  EXPECT_EQ(replica.text({"DEBUG", "LOADAOF"}), "OK");
  EXPECT_EQ(snapshot(replica), primary);
}

// RL.MANY <algorithm>_<op> now limits key cost ...: each call decides as
// the same call sent alone (RL.<op>), every algorithm: replies, values and
// expiry instants alike, a key met twice in one batch included.
TEST_F(ModuleTest, ManyDecidesAsCallsSentAlone) {
  std::mt19937_64 rng(33);
  int config_index = 0;
  for (const Config& c : kConfigs) {
    const std::string tag = "{many" + std::to_string(config_index++) + "}";
    std::vector<std::string> alone_keys, many_keys;
    for (int k = 0; k < 3; ++k) {
      alone_keys.push_back(tag + "alone" + std::to_string(k));
      many_keys.push_back(tag + "many" + std::to_string(k));
      redis_->run({"DEL", alone_keys.back(), many_keys.back()});
    }
    int64_t now = start_;
    for (int step = 0; step < 150; ++step) {
      const RandomCall call = random_call(c, now, rng);
      std::vector<std::string> many = {"RL.MANY", std::string(c.algorithm) + "_" + call.op, call.at,
                                       c.limits};
      std::string alone = "[";
      const int calls = 1 + static_cast<int>(rng() % 5);
      for (int i = 0; i < calls; ++i) {
        const size_t k = rng() % 3;
        const int64_t cost = 1 + static_cast<int64_t>(rng() % 3);
        const std::string amount = cost_arg(c, cost, rng);
        alone += (i ? " " : "") + redis_->text({"RL." + call.op, alone_keys[k], c.algorithm,
                                                call.at, amount, c.limits});
        many.push_back(many_keys[k]);
        many.push_back(amount);
      }
      const std::string where = call.where(c, step);
      ASSERT_EQ(redis_->text(many), alone + "]") << where;
      for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(value_of(*redis_, many_keys[k]), value_of(*redis_, alone_keys[k])) << where;
        ASSERT_EQ(redis_->text({"PEXPIRETIME", many_keys[k]}),
                  redis_->text({"PEXPIRETIME", alone_keys[k]}))
            << where;
      }
    }
  }
  // The server's clock: read once for the batch, as RL.BATCH does.
  const char* limits = "0 2 1000000 2 1 500000 0";
  redis_->run({"DEL", "{mc}batch", "{mc}many"});
  EXPECT_EQ(redis_->text({"RL.MANY", "gcra_acquire", "", limits, "{mc}many", "1", "{mc}many", "1",
                          "{mc}many", "1"}),
            redis_->text({"RL.BATCH", "{mc}batch", "gcra_acquire", "", "1", limits, "{mc}batch",
                          "gcra_acquire", "", "1", limits, "{mc}batch", "gcra_acquire", "", "1",
                          limits}));
}

// Bad input to RL.MANY: what the batch shares is the command's one error,
// naming it; a call's own bad cost or key type is that call's error, and
// the others run.
TEST_F(ModuleTest, ManyBadInputIsAnErrorNamingIt) {
  const std::string at = std::to_string(start_);
  const char* limits = "0 10 1000000 10 1 100000 0";
  redis_->run({"DEL", "{mb}k"});
  redis_->run({"DEL", "{mb}list"});
  redis_->run({"LPUSH", "{mb}list", "x"});
  struct Case {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"RL.MANY", "gcra_acquire", at, limits}, "wrong number of arguments"},
      {{"RL.MANY", "gcra_acquire", at, limits, "{mb}k"}, "wrong number of arguments"},
      {{"RL.MANY", "gcra_acquire", at, limits, "{mb}k", "1", "{mb}k"}, "wrong number of arguments"},
      {{"RL.MANY", "gcra", at, limits, "{mb}k", "1"},
       "call: 'gcra' is not <algorithm>_<operation>"},
      {{"RL.MANY", "lru_acquire", at, limits, "{mb}k", "1"}, "algorithm: 'lru' is unknown"},
      {{"RL.MANY", "gcra_take", at, limits, "{mb}k", "1"}, "operation: 'take' is unknown"},
      {{"RL.MANY", "gcra_acquire", "soon", limits, "{mb}k", "1"}, "now: 'soon' is not an integer"},
      {{"RL.MANY", "gcra_acquire", at, "0 10", "{mb}k", "1"}, "limits: '0 10' is not"},
      {{"RL.MANY", "sliding_window_acquire", at, "0 10 1000000 10 1 100000 7", "{mb}k", "1"},
       "granularity_us: 7 must divide"},
      {{"RL.MANY", "suppressed_lease", at, limits, "{mb}k", "1 1000"},
       "operation: lease takes fixed_window, sliding_window, sliding_log, gcra or token_bucket"},
      {{"RL.MANY", "gcra_lease", at, "0 10 1000000 10 1 100000 0 20 60000000 20 1 3000000 0",
        "{mb}k", "1 1000"},
       "limits: lease and release take one limit"},
  };
  for (const Case& c : cases) {
    const std::string reply = redis_->text(c.args);
    EXPECT_EQ(reply.rfind("(error) ", 0), 0u) << reply;  // one error, not an array
    EXPECT_NE(reply.find(c.says), std::string::npos) << reply << " should say " << c.says;
  }
  EXPECT_EQ(redis_->text({"EXISTS", "{mb}k"}), "0");
  // A call's own error: its place in the array; the others as if alone.
  const std::string mixed = redis_->text(
      {"RL.MANY", "gcra_acquire", at, limits, "{mb}k", "-1", "{mb}list", "1", "{mb}k", "1"});
  EXPECT_EQ(mixed.rfind("[(error) ERR rl: cost: -1 is outside", 0), 0u) << mixed;
  EXPECT_NE(mixed.find("(error) WRONGTYPE"), std::string::npos) << mixed;
  redis_->run({"DEL", "{mb}alone"});
  const std::string alone = redis_->text({"RL.ACQUIRE", "{mb}alone", "gcra", at, "1", limits});
  EXPECT_EQ(mixed.substr(mixed.size() - alone.size() - 2), " " + alone + "]") << mixed;
  // Above 1,000 calls: refused whole.
  std::vector<std::string> big = {"RL.MANY", "gcra_peek", at, limits};
  for (int i = 0; i < 1001; ++i) {
    big.push_back("{mb}k");
    big.push_back("1");
  }
  EXPECT_NE(redis_->text(big).find("at most 1000 in one RL.MANY"), std::string::npos);
  EXPECT_EQ(redis_->text({"PING"}), "PONG");
}

// RL.MANY announces each key's changes as the same calls sent alone do.
TEST_F(ModuleTest, ManyKeyspaceEventsAsCallsSentAlone) {
  const std::string was = redis_->run({"CONFIG", "GET", "notify-keyspace-events"})->element[1]->str;
  redis_->run({"CONFIG", "SET", "notify-keyspace-events", "KA"});
  Client events("RL_TEST_REDIS_MODULE_URL");
  events.run({"PSUBSCRIBE", "__keyspace@0__:{me*"});
  auto take = [&] {
    redis_->run({"PUBLISH", "__keyspace@0__:{me}mark", "mark"});
    std::map<std::string, std::string> seen;
    for (;;) {
      const ReplyPtr m = events.next();
      const std::string channel = m->element[2]->str;
      const std::string key = channel.substr(channel.find(':') + 1);
      if (key == "{me}mark") return seen;
      seen[key] += std::string(m->element[3]->str) + " ";
    }
  };
  std::mt19937_64 rng(9);
  int config_index = 0;
  for (const Config& c : kConfigs) {
    const std::string tag = "{me" + std::to_string(config_index++) + "}";
    const std::string alone = tag + "alone", native = tag + "many";
    int64_t now = start_;
    for (int step = 0; step < 60; ++step) {
      const RandomCall call = random_call(c, now, rng);
      take();
      redis_->run({"RL." + call.op, alone, c.algorithm, call.at, call.amount, c.limits});
      redis_->run({"RL.MANY", std::string(c.algorithm) + "_" + call.op, call.at, c.limits, native,
                   call.amount});
      std::map<std::string, std::string> seen = take();
      EXPECT_EQ(seen[native], seen[alone]) << call.where(c, step);
    }
  }
  redis_->run({"CONFIG", "SET", "notify-keyspace-events", was});
}

// Batches (RL.MANY, and RL.BATCH of every algorithm mixed) replicate their
// string writes as one EVAL per batch: the replica, and its AOF reloaded,
// hold exactly the primary's keys and expiries; the replica never runs the
// module's commands (a replica without the module gets the same writes).
TEST_F(ModuleTest, BatchesReplicateToTheReplicaAndAofExactly) {
  Client replica("RL_TEST_REDIS_MODULE_REPLICA_URL");
  auto stat = [&](const std::string& command) {
    const std::string info = replica.text({"INFO", "commandstats"});
    const size_t at = info.find("cmdstat_" + command + ":calls=");
    return at == std::string::npos ? 0 : std::stoll(info.substr(at + 15 + command.size()));
  };
  const int64_t evals_before = stat("eval");
  std::mt19937_64 rng(11);
  std::vector<std::string> keys;
  int64_t now = start_;
  int many_batches = 0;
  int config_index = 0;
  for (const Config& c : kConfigs) {
    const std::string tag = "{rb" + std::to_string(config_index++) + "}";
    for (int k = 0; k < 4; ++k) keys.push_back(tag + std::to_string(k));
    for (int i = 0; i < 20; ++i) {
      now += static_cast<int64_t>(rng() % (c.step_us + 1));
      const char* op = i % 7 == 6 ? "refund" : i == 13 ? "reset" : "acquire";
      std::vector<std::string> many = {"RL.MANY", std::string(c.algorithm) + "_" + op,
                                       std::to_string(now), c.limits};
      for (int j = 0; j < 6; ++j) {
        many.push_back(keys[keys.size() - 4 + rng() % 4]);
        many.push_back(cost_arg(c, 1, rng));
      }
      redis_->run(many);
      if (std::string(c.algorithm) != "sliding_log") ++many_batches;
    }
  }
  // RL.BATCH of mixed algorithms, list and string keys in one batch.
  for (int i = 0; i < 20; ++i) {
    now += 50000;
    std::vector<std::string> batch = {"RL.BATCH"};
    for (int j = 0; j < 8; ++j) {
      const Config& c = kConfigs[rng() % std::size(kConfigs)];
      const size_t which = rng() % std::size(kConfigs);
      batch.push_back("{rbm}" + std::to_string(which) + c.algorithm);
      batch.push_back(std::string(c.algorithm) + (j % 5 == 4 ? "_refund" : "_acquire"));
      batch.push_back(std::to_string(now));
      batch.push_back(cost_arg(c, 1, rng));
      batch.push_back(c.limits);
      keys.push_back(batch[batch.size() - 5]);
    }
    redis_->run(batch);
  }
  // The server's clock, and a manual clock in the past (keys written
  // already expired, met again in the same batch): the replica reads none
  // of its own.
  const char* limits = "0 10 3600000000 10 1 360000000 0";
  redis_->run({"RL.MANY", "gcra_acquire", "", limits, "{rbc}a", "1", "{rbc}b", "2", "{rbc}a", "1"});
  redis_->run({"RL.MANY", "token_bucket_acquire", "1000000", "0 10 1000000 10 1 100000 0",
               "{rbc}past", "1", "{rbc}past", "1", "{rbc}other", "1"});
  // The last call on a key written expired writes nothing: the key's DEL
  // (its expiry, found by that call) is the last word on it.
  redis_->run({"RL.BATCH", "{rbc}gone", "gcra_acquire", "1000000", "1",
               "0 10 1000000 10 1 100000 0", "{rbc}gone", "gcra_peek", "1000000", "1",
               "0 10 1000000 10 1 100000 0"});
  for (const char* k : {"{rbc}a", "{rbc}b", "{rbc}past", "{rbc}other", "{rbc}gone"}) {
    keys.push_back(k);
  }
  ASSERT_EQ(redis_->run({"WAIT", "1", "10000"})->integer, 1);
  auto snapshot = [&](Client& on) {
    std::string out;
    for (const std::string& k : keys) {
      out += k + "=" + value_of(on, k) + "@" + on.text({"PEXPIRETIME", k}) + "\n";
    }
    return out + "keys " + on.text({"DBSIZE"});
  };
  const std::string primary = snapshot(*redis_);
  // What reading expired keys on the primary deleted reaches the replica too.
  ASSERT_EQ(redis_->run({"WAIT", "1", "10000"})->integer, 1);
  EXPECT_EQ(snapshot(replica), primary);
  EXPECT_GE(stat("eval") - evals_before, many_batches);
  EXPECT_EQ(stat("rl.many"), 0);
  EXPECT_EQ(stat("rl.batch"), 0);
  EXPECT_EQ(replica.text({"DEBUG", "LOADAOF"}), "OK");
  EXPECT_EQ(snapshot(replica), primary);
}

}  // namespace
