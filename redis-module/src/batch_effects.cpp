#include "batch_effects.h"

namespace rl::module {
namespace {

// ARGV: for each write, its word count then the command's words.
constexpr char kScript[] =
    "-- rl: one RL.BATCH/RL.MANY's writes\n"
    "local a, i, n = ARGV, 1, #ARGV\n"
    "while i <= n do\n"
    "  local words = tonumber(a[i])\n"
    "  redis.call(unpack(a, i + 1, i + words))\n"
    "  i = i + words + 1\n"
    "end\n";

// The words every batch shares, made once and kept for the server's life.
struct Words {
  RedisModuleString* script;
  RedisModuleString* zero;
  RedisModuleString* five;
  RedisModuleString* two;
  RedisModuleString* set;
  RedisModuleString* pxat;
  RedisModuleString* del;
};

const Words& words() {
  static const Words w = [] {
    auto make = [](const char* s, size_t n) { return api.CreateString(nullptr, s, n); };
    return Words{make(kScript, sizeof kScript - 1),
                 make("0", 1),
                 make("5", 1),
                 make("2", 1),
                 make("SET", 3),
                 make("PXAT", 4),
                 make("DEL", 3)};
  }();
  return w;
}

// The EVAL's argv after its name, and the strings it made (freed after):
// kept from batch to batch, so a batch allocates nothing here once they
// have grown to its size (one command runs at a time).
std::vector<RedisModuleString*>& argv() {
  static std::vector<RedisModuleString*> v;
  return v;
}
std::vector<RedisModuleString*>& owned() {
  static std::vector<RedisModuleString*> v;
  return v;
}

void start(std::vector<RedisModuleString*>& v) {
  if (!v.empty()) return;
  v.push_back(words().script);
  v.push_back(words().zero);  // numkeys: the keys are words of ARGV
}

}  // namespace

void BatchEffects::set(RedisModuleString* name, RedisModuleString* value, long long at_ms) {
  std::vector<RedisModuleString*>& v = argv();
  start(v);
  RedisModuleString* at = api.CreateStringFromLongLong(nullptr, at_ms);
  owned().push_back(value);
  owned().push_back(at);
  const Words& w = words();
  v.insert(v.end(), {w.five, w.set, name, value, w.pxat, at});
  any_ = true;
}

void BatchEffects::remove(RedisModuleString* name) {
  std::vector<RedisModuleString*>& v = argv();
  start(v);
  const Words& w = words();
  v.insert(v.end(), {w.two, w.del, name});
  any_ = true;
}

void BatchEffects::flush() {
  if (!any_) return;
  any_ = false;
  std::vector<RedisModuleString*>& v = argv();
  api.Replicate(ctx_, "EVAL", "v", v.data(), v.size());
  v.clear();
  for (RedisModuleString* s : owned()) api.FreeString(nullptr, s);
  owned().clear();
}

}  // namespace rl::module
