#include "batch_effects.h"

#include <charconv>
#include <string>
#include <vector>

namespace rl::module {
namespace {

// ARGV[1]: one letter per write, S (SET key value PXAT ms) or D (DEL key);
// ARGV[2]: the SETs' expiry instants (ms), space-separated; then each
// write's key (and value). Two words per write: no string is made for a
// write but its value, which the key holds anyway.
constexpr char kScript[] =
    "-- rl: the writes of one RL.BATCH or RL.MANY, in order\n"
    "local ops, at = ARGV[1], {}\n"
    "for ms in string.gmatch(ARGV[2], '%d+') do at[#at + 1] = ms end\n"
    "local a, s = 3, 1\n"
    "for i = 1, #ops do\n"
    "  if string.byte(ops, i) == 83 then\n"
    "    redis.call('SET', ARGV[a], ARGV[a + 1], 'PXAT', at[s])\n"
    "    a, s = a + 2, s + 1\n"
    "  else\n"
    "    redis.call('DEL', ARGV[a])\n"
    "    a = a + 1\n"
    "  end\n"
    "end\n";

// What a batch gathers, kept from batch to batch (one command runs at a
// time): once grown to a batch's size, a write allocates nothing here.
struct Gathered {
  std::string ops;
  std::string expiries;
  std::vector<RedisModuleString*> argv;   // script, numkeys, ops, expiries, keys and values
  std::vector<RedisModuleString*> owned;  // the values, freed after the flush
};

Gathered& gathered() {
  static Gathered g;
  return g;
}

RedisModuleString* script() {
  static RedisModuleString* const s = api.CreateString(nullptr, kScript, sizeof kScript - 1);
  return s;
}
RedisModuleString* zero() {
  static RedisModuleString* const s = api.CreateString(nullptr, "0", 1);
  return s;
}

void start(Gathered& g) {
  if (!g.argv.empty()) return;
  g.argv.assign({script(), zero(), nullptr, nullptr});  // numkeys 0: keys are words of ARGV
}

}  // namespace

void BatchEffects::set(RedisModuleString* name, RedisModuleString* value, long long at_ms) {
  Gathered& g = gathered();
  start(g);
  g.ops += 'S';
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, at_ms).ptr;
  if (!g.expiries.empty()) g.expiries += ' ';
  g.expiries.append(digits, end);
  g.argv.push_back(name);
  g.argv.push_back(value);
  g.owned.push_back(value);
  any_ = true;
}

void BatchEffects::remove(RedisModuleString* name) {
  Gathered& g = gathered();
  start(g);
  g.ops += 'D';
  g.argv.push_back(name);
  any_ = true;
}

void BatchEffects::flush() {
  if (!any_) return;
  any_ = false;
  Gathered& g = gathered();
  RedisModuleString* ops = api.CreateString(nullptr, g.ops.data(), g.ops.size());
  RedisModuleString* expiries = api.CreateString(nullptr, g.expiries.data(), g.expiries.size());
  g.argv[2] = ops;
  g.argv[3] = expiries;
  api.Replicate(ctx_, "EVAL", "v", g.argv.data(), g.argv.size());  // holds what it keeps
  api.FreeString(nullptr, ops);
  api.FreeString(nullptr, expiries);
  for (RedisModuleString* s : g.owned) api.FreeString(nullptr, s);
  g.owned.clear();
  g.argv.clear();
  g.ops.clear();
  g.expiries.clear();
}

}  // namespace rl::module
