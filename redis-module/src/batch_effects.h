// The writes of one command (a batch's, or a sliding_log call's several),
// replicated as one effect: one EVAL of a fixed script that runs them in
// order (SET key value PXAT ms, DEL, and sliding_log's RPUSH, LSET -1,
// LTRIM n -1, RPOP, PEXPIREAT), instead of a command looked up and an argv
// built per write. It is plain Redis: a replica or an AOF replay needs no
// module, and decides nothing (the primary's clock stays the primary's).
#pragma once

#include "module_api.h"

namespace rl::module {

class BatchEffects {
 public:
  // `wall_ms`: the time when the command began, or later.
  BatchEffects(RedisModuleCtx* ctx, long long wall_ms) : ctx_(ctx), wall_ms_(wall_ms) {}
  ~BatchEffects() { flush(); }
  BatchEffects(const BatchEffects&) = delete;
  BatchEffects& operator=(const BatchEffects&) = delete;

  // Each write on key `name`; a `value` is taken over (freed after the flush).
  void set(RedisModuleString* name, RedisModuleString* value, long long at_ms);  // SET PXAT
  void remove(RedisModuleString* name);                                          // DEL
  void push(RedisModuleString* name, RedisModuleString* value);                  // RPUSH
  void set_newest(RedisModuleString* name, RedisModuleString* value);            // LSET -1
  void trim(RedisModuleString* name, long long dead);                            // LTRIM dead -1
  void pop_newest(RedisModuleString* name);                                      // RPOP
  void expire_at(RedisModuleString* name, long long at_ms);                      // PEXPIREAT

  // Whether a key written to expire `at_ms` may be expired (and its DEL
  // replicated) by this same command: the server's clock stands still
  // during a command, so only a key written already expired (a manual clock
  // in the past) may; what was gathered must then go first (flush).
  bool may_expire_now(long long at_ms) const { return at_ms <= wall_ms_; }
  // Replicates what was gathered, in order, as one EVAL (nothing if none).
  void flush();

 private:
  void gather(char op, RedisModuleString* name, RedisModuleString* value, const long long* number);

  RedisModuleCtx* ctx_;
  long long wall_ms_;
  bool any_ = false;
};

}  // namespace rl::module
