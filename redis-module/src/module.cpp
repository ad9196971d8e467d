// librl_redis.so: rl's decisions as native Redis commands, on the same keys
// and values as the Lua path (docs/redis-module.md). Each command reads the
// key, decides with core/algorithms/ and writes through the low-level key
// API; it replicates its effects (SET ... PXAT, DEL, the list commands;
// a batch's string writes as one EVAL of them), never itself, since a
// replica's or an AOF reload's clock is not the primary's.
#include <sys/time.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>

#include "batch_effects.h"
#include "command_error.h"
#include "decision.h"
#include "module_api.h"
#include "request.h"
#include "sliding_log_list.h"

namespace rl::module {
namespace {

std::string_view view_of(RedisModuleString* s) {
  size_t len = 0;
  const char* p = api.StringPtrLen(s, &len);
  return {p, len};
}

// Redis TIME's source (gettimeofday), in us: the Lua path's clock.
int64_t server_now_us() {
  timeval tv;
  gettimeofday(&tv, nullptr);
  return int64_t{tv.tv_sec} * 1000000 + tv.tv_usec;
}

// The Lua path's reply, byte for byte: one string of the reply's integers,
// each 8 bytes little-endian. A decision (acquire, peek) of one limit
// leaves out the limit and the index (the caller knows them): {allowed,
// remaining, retry_after_us, reset_after_us, next_retry_after_us}.
void reply_with(RedisModuleCtx* ctx, const Reply& r, const Request& q) {
  const bool one_limit_decision =
      (q.op == Op::acquire || q.op == Op::peek || q.op == Op::lease || q.op == Op::release) &&
      q.rates.size() == 1 && q.algorithm != AlgorithmKind::suppressed;
  int64_t values[8];
  int n = 0;
  if (one_limit_decision) {
    for (int i : {0, 2, 3, 4}) values[n++] = r.values[i];
    values[n++] = r.size > 6 ? r.values[6] : 0;
  } else {
    for (int i = 0; i < r.size && i < 8; ++i) values[n++] = r.values[i];
  }
  char bytes[sizeof values];
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(bytes, values, sizeof values);  // already the reply's bytes
  } else {
    for (int i = 0; i < n; ++i) {
      const auto v = static_cast<uint64_t>(values[i]);
      for (int b = 0; b < 8; ++b) bytes[i * 8 + b] = static_cast<char>((v >> (8 * b)) & 0xff);
    }
  }
  api.ReplyWithStringBuffer(ctx, bytes, static_cast<size_t>(n) * 8);
}

// A key closed on every path out.
class OpenedKey {
 public:
  OpenedKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode)
      : key_(api.OpenKey(ctx, name, mode)) {}
  ~OpenedKey() {
    if (key_) api.CloseKey(key_);
  }
  OpenedKey(const OpenedKey&) = delete;
  OpenedKey& operator=(const OpenedKey&) = delete;
  RedisModuleKey* get() const { return key_; }
  RedisModuleKey*& handle() { return key_; }  // for a callee that reopens it

 private:
  RedisModuleKey* key_;
};

// Applies a decision's write and replicates it as the Lua path's own
// commands would be, alone or (`batch`) gathered into the batch's one effect.
void apply_write(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name, bool existed,
                 const Write& w, BatchEffects* batch) {
  if (w.kind == Write::Kind::remove) {
    if (!existed) return;  // DEL of a missing key changes nothing: nothing to replicate
    api.DeleteKey(key);
    if (batch) {
      batch->remove(name);
    } else {
      api.Replicate(ctx, "DEL", "s", name);
    }
    api.NotifyKeyspaceEvent(ctx, kNotifyGeneric, "del", name);
    return;
  }
  if (w.kind != Write::Kind::set) return;
  RedisModuleString* value = api.CreateString(ctx, w.value.data(), w.value.size());
  if (existed && api.StringTruncate(key, w.value.size()) == kOk) {
    // The string the key holds, rewritten in place: no second lookup of
    // the key, no new value object (the server copies it first if anything
    // else holds it, as a batch's gathered effects may).
    size_t len = 0;
    char* bytes = api.StringDMA(key, &len, kWrite);
    std::memcpy(bytes, w.value.data(), w.value.size());
  } else {
    api.StringSet(key, value);
  }
  long long at = w.expire_at_ms;
  if (w.ttl_ms == 0) {
    api.SetAbsExpire(key, at);
  } else {
    api.SetExpire(key, w.ttl_ms);
    at = api.GetAbsExpire(key);
  }
  if (batch) {
    batch->set(name, value, at);
    if (batch->may_expire_now(at)) batch->flush();
  } else {
    // The value the key holds, by reference: no copy of it made.
    static RedisModuleString* const pxat = api.CreateString(nullptr, "PXAT", 4);
    RedisModuleString* at_text = api.CreateStringFromLongLong(nullptr, at);
    api.Replicate(ctx, "SET", "ssss", name, value, pxat, at_text);
    api.FreeString(nullptr, at_text);
    api.FreeString(ctx, value);
  }
  api.NotifyKeyspaceEvent(ctx, kNotifyString, "set", name);
  api.NotifyKeyspaceEvent(ctx, kNotifyGeneric, "expire", name);
}

// One decision on `name`: its reply is sent; a CommandError is thrown
// before anything is written. In a batch, `batch` gathers its string
// writes and `d` is the batch's reused decision.
void run_one(RedisModuleCtx* ctx, RedisModuleString* name, const Request& q, int64_t now,
             BatchEffects* batch = nullptr, Decision* reused = nullptr) {
  const int mode = q.op != Op::peek ? kRead | kWrite : kRead;
  OpenedKey key(ctx, name, mode);
  const int type = api.KeyType(key.get());
  if (q.algorithm == AlgorithmKind::sliding_log) {
    if (type != kKeyTypeEmpty && type != kKeyTypeList) {
      throw CommandError(CommandError::Verbatim{}, kWrongType);
    }
    // A call alone replicates its list writes as one effect too.
    std::optional<BatchEffects> alone;
    if (!batch) batch = &alone.emplace(ctx, server_now_us() / 1000);
    reply_with(ctx, run_sliding_log(ctx, key.handle(), name, mode, q, now, *batch), q);
    return;
  }
  if (type != kKeyTypeEmpty && type != kKeyTypeString) {
    throw CommandError(CommandError::Verbatim{}, kWrongType);
  }
  std::optional<std::string_view> stored;
  if (type == kKeyTypeString) {
    size_t len = 0;
    const char* p = api.StringDMA(key.get(), &len, kRead);
    stored = std::string_view(p, len);
  }
  Decision local;
  Decision& d = reused ? *reused : local;
  decide_string(q, stored, now, d);
  apply_write(ctx, key.get(), name, type != kKeyTypeEmpty, d.write, batch);
  reply_with(ctx, d.reply, q);
}

int64_t now_of(const Request& q) {
  return q.now ? *q.now : server_now_us();
}

// Any failure as an error reply: nothing in a command may take the server
// down. `what` prefixes errors that are not the module's own.
void reply_error(RedisModuleCtx* ctx, const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const CommandError& c) {
    api.ReplyWithError(ctx, c.what());
  } catch (const std::bad_alloc&) {
    api.ReplyWithError(ctx, "ERR rl: out of memory");
  } catch (...) {
    api.ReplyWithError(ctx, "ERR rl: internal error");
  }
}

// RL.<OP> key algorithm now cost limits
template <Op op>
int single_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 6) return api.WrongArity(ctx);
  try {
    const Request q = parse_request(parse_algorithm_arg(view_of(argv[2])), op, view_of(argv[3]),
                                    view_of(argv[4]), view_of(argv[5]));
    run_one(ctx, argv[1], q, now_of(q));
  } catch (...) {
    reply_error(ctx, std::current_exception());
  }
  return kOk;
}

std::string too_many(int calls, const char* command) {
  return "ERR rl: batch: " + std::to_string(calls) + " calls; at most " +
         std::to_string(kMaxBatch) + " in one " + command;
}

// RL.BATCH key1 <algorithm>_<op>1 now1 cost1 limits1 key2 ...: the calls in
// order, each as if sent alone, one reply (or error) per call, the server's
// clock read once (as the Lua batch).
int batch_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 6 || (argc - 1) % 5 != 0) return api.WrongArity(ctx);
  const int calls = (argc - 1) / 5;
  if (calls > kMaxBatch) {
    api.ReplyWithError(ctx, too_many(calls, "RL.BATCH").c_str());
    return kOk;
  }
  api.ReplyWithArray(ctx, calls);
  std::optional<int64_t> server_now;
  BatchEffects effects(ctx, server_now_us() / 1000);
  Decision d;
  for (int i = 0; i < calls; ++i) {
    RedisModuleString** call = argv + 1 + 5 * i;
    try {
      AlgorithmKind algorithm;
      Op op;
      parse_call_name(view_of(call[1]), algorithm, op);
      const Request q =
          parse_request(algorithm, op, view_of(call[2]), view_of(call[3]), view_of(call[4]));
      if (!q.now && !server_now) server_now = server_now_us();
      run_one(ctx, call[0], q, q.now ? *q.now : *server_now, &effects, &d);
    } catch (...) {
      reply_error(ctx, std::current_exception());
    }
  }
  return kOk;
}

// RL.MANY <algorithm>_<op> now limits key1 cost1 [key2 cost2 ...]: one
// operation of one limiter on many keys, its name, clock and limits parsed
// once; the calls in order, each as if sent alone, one reply (or error) per
// call. An error in what the calls share is the command's one error.
int many_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 6 || (argc - 4) % 2 != 0) return api.WrongArity(ctx);
  const int calls = (argc - 4) / 2;
  if (calls > kMaxBatch) {
    api.ReplyWithError(ctx, too_many(calls, "RL.MANY").c_str());
    return kOk;
  }
  Request q;
  try {
    AlgorithmKind algorithm;
    Op op;
    parse_call_name(view_of(argv[1]), algorithm, op);
    q = parse_clock(algorithm, op, view_of(argv[2]));
    parse_limits_into(q, view_of(argv[3]));
  } catch (...) {
    reply_error(ctx, std::current_exception());
    return kOk;
  }
  const int64_t wall = server_now_us();
  const int64_t now = q.now ? *q.now : wall;
  api.ReplyWithArray(ctx, calls);
  BatchEffects effects(ctx, wall / 1000);
  Decision d;
  for (int i = 0; i < calls; ++i) {
    RedisModuleString** call = argv + 4 + 2 * i;
    try {
      parse_cost(q, view_of(call[1]));
      run_one(ctx, call[0], q, now, &effects, &d);
    } catch (...) {
      reply_error(ctx, std::current_exception());
    }
  }
  return kOk;
}

struct CommandSpec {
  const char* name;
  RedisModuleCmdFunc fn;
  const char* flags;
  int first_key;
  int last_key;
  int key_step;
  const char* acl;  // Redis 7.2+
};

constexpr CommandSpec kCommands[] = {
    {"rl.acquire", single_command<Op::acquire>, "write deny-oom fast", 1, 1, 1, "write fast"},
    {"rl.peek", single_command<Op::peek>, "readonly fast", 1, 1, 1, "read fast"},
    {"rl.refund", single_command<Op::refund>, "write deny-oom fast", 1, 1, 1, "write fast"},
    {"rl.reset", single_command<Op::reset>, "write fast", 1, 1, 1, "write fast"},
    {"rl.lease", single_command<Op::lease>, "write deny-oom fast", 1, 1, 1, "write fast"},
    {"rl.release", single_command<Op::release>, "write deny-oom fast", 1, 1, 1, "write fast"},
    {"rl.batch", batch_command, "write deny-oom", 1, -1, 5, "write slow"},
    {"rl.many", many_command, "write deny-oom", 4, -1, 2, "write slow"},
};

}  // namespace
}  // namespace rl::module

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString**, int) {
  using namespace rl::module;
  const char* missing = nullptr;
  if (!bind(ctx, &missing)) return kErr;  // a server older than Redis 7.0
  if (api.IsModuleNameBusy("rl")) return kErr;
  api.SetModuleAttribs(ctx, "rl", 1, kApiVersion1);
  for (const CommandSpec& c : kCommands) {
    if (api.CreateCommand(ctx, c.name, c.fn, c.flags, c.first_key, c.last_key, c.key_step) != kOk) {
      return kErr;
    }
    if (api.SetCommandACLCategories) {
      api.SetCommandACLCategories(api.GetCommand(ctx, c.name), c.acl);
    }
  }
  return kOk;
}
