// A batch's string writes (SET key value PXAT ms, DEL key), replicated as
// one effect for the whole batch: one EVAL of a fixed script that runs them
// in order, instead of a command looked up and an argv built per decision.
// It is plain Redis: a replica or an AOF replay needs no module, and decides
// nothing (the primary's clock stays the primary's).
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

  // SET name value PXAT at_ms; takes `value` over (freed after the flush).
  void set(RedisModuleString* name, RedisModuleString* value, long long at_ms);
  // DEL name.
  void remove(RedisModuleString* name);
  // Whether a key written to expire `at_ms` may be expired (and its DEL
  // replicated) by this same command: the server's clock stands still
  // during a command, so only a key written already expired (a manual clock
  // in the past) may; its SET must then go first.
  bool may_expire_now(long long at_ms) const { return at_ms <= wall_ms_; }
  // Replicates what was gathered, in order, as one EVAL (nothing if none):
  // before any effect replicated otherwise (sliding_log's list commands),
  // so that the stream keeps the order of the writes.
  void flush();

 private:
  RedisModuleCtx* ctx_;
  long long wall_ms_;
  bool any_ = false;
};

}  // namespace rl::module
