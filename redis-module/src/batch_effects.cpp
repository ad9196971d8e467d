#include "batch_effects.h"

#include <charconv>
#include <string>
#include <vector>

namespace rl::module {
namespace {

// ARGV[1]: one letter per write; ARGV[2]: the writes' numbers (expiry
// instants, LTRIM's count), space-separated, in order; then each write's
// key (and value). At most two words per write: no string is made for a
// write but its value, which the key holds anyway.
constexpr char kScript[] =
    "-- rl: the writes of one rl module command, in order\n"
    "local ops, n = ARGV[1], {}\n"
    "for v in string.gmatch(ARGV[2], '%d+') do n[#n + 1] = v end\n"
    "local a, s = 3, 1\n"
    "for i = 1, #ops do\n"
    "  local op, k = string.sub(ops, i, i), ARGV[a]\n"
    "  if op == 'S' then\n"
    "    redis.call('SET', k, ARGV[a + 1], 'PXAT', n[s]); a, s = a + 2, s + 1\n"
    "  elseif op == 'D' then\n"
    "    redis.call('DEL', k); a = a + 1\n"
    "  elseif op == 'R' then\n"
    "    redis.call('RPUSH', k, ARGV[a + 1]); a = a + 2\n"
    "  elseif op == 'L' then\n"
    "    redis.call('LSET', k, -1, ARGV[a + 1]); a = a + 2\n"
    "  elseif op == 'T' then\n"
    "    redis.call('LTRIM', k, n[s], -1); a, s = a + 1, s + 1\n"
    "  elseif op == 'P' then\n"
    "    redis.call('RPOP', k); a = a + 1\n"
    "  else\n"
    "    redis.call('PEXPIREAT', k, n[s]); a, s = a + 1, s + 1\n"
    "  end\n"
    "end\n";

// What a command gathers, kept from command to command (one runs at a
// time): once grown to a batch's size, a write allocates nothing here.
struct Gathered {
  std::string ops;
  std::string numbers;
  std::vector<RedisModuleString*> argv;   // script, numkeys, ops, numbers, keys and values
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

}  // namespace

void BatchEffects::gather(char op, RedisModuleString* name, RedisModuleString* value,
                          const long long* number) {
  Gathered& g = gathered();
  if (g.argv.empty()) g.argv.assign({script(), zero(), nullptr, nullptr});  // numkeys 0
  g.ops += op;
  if (number) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, *number).ptr;
    if (!g.numbers.empty()) g.numbers += ' ';
    g.numbers.append(digits, end);
  }
  g.argv.push_back(name);
  if (value) {
    g.argv.push_back(value);
    g.owned.push_back(value);
  }
  any_ = true;
}

void BatchEffects::set(RedisModuleString* name, RedisModuleString* value, long long at_ms) {
  gather('S', name, value, &at_ms);
}
void BatchEffects::remove(RedisModuleString* name) {
  gather('D', name, nullptr, nullptr);
}
void BatchEffects::push(RedisModuleString* name, RedisModuleString* value) {
  gather('R', name, value, nullptr);
}
void BatchEffects::set_newest(RedisModuleString* name, RedisModuleString* value) {
  gather('L', name, value, nullptr);
}
void BatchEffects::trim(RedisModuleString* name, long long dead) {
  gather('T', name, nullptr, &dead);
}
void BatchEffects::pop_newest(RedisModuleString* name) {
  gather('P', name, nullptr, nullptr);
}
void BatchEffects::expire_at(RedisModuleString* name, long long at_ms) {
  gather('E', name, nullptr, &at_ms);
}

void BatchEffects::flush() {
  if (!any_) return;
  any_ = false;
  Gathered& g = gathered();
  RedisModuleString* ops = api.CreateString(nullptr, g.ops.data(), g.ops.size());
  RedisModuleString* numbers = api.CreateString(nullptr, g.numbers.data(), g.numbers.size());
  g.argv[2] = ops;
  g.argv[3] = numbers;
  api.Replicate(ctx_, "EVAL", "v", g.argv.data(), g.argv.size());  // holds what it keeps
  api.FreeString(nullptr, ops);
  api.FreeString(nullptr, numbers);
  for (RedisModuleString* s : g.owned) api.FreeString(nullptr, s);
  g.owned.clear();
  g.argv.clear();
  g.ops.clear();
  g.numbers.clear();
}

}  // namespace rl::module
