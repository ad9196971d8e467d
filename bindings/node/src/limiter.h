// A limiter handle for JS and the rl_limiter_* calls on it, one export per
// function (addon.cc lists them). A sync call decides on the JS thread and
// writes its decision into the `decision` export; an async one returns at
// once and runs its JS callback on the JS thread when rl completes it.
// Which to call (memory:// inline or not) is lib/limiter.js's choice.
#pragma once

#include <napi.h>
#include <rl/rl.h>

namespace rlnode {

class Store;

class Limiter {
 public:
  // limiterNew(store, [key, value, ...]) -> limiter handle (rl_limiter_free
  // runs when it is collected)
  static Napi::Value New(const Napi::CallbackInfo& info);
  // limiterName(limiter) -> rl_limiter_name
  static Napi::Value Name(const Napi::CallbackInfo& info);
  // limiterLimits(limiter) -> rl_limiter_limits: [{ limit, windowUs, burst }, ...]
  static Napi::Value Limits(const Napi::CallbackInfo& info);
  // limiterAcquire / limiterPeek / limiterRefund(limiter, key, cost,
  // timeoutUs = 0): rl_limiter_acquire / _peek / _refund; the decision goes
  // to the `decision` export.
  static Napi::Value Acquire(const Napi::CallbackInfo& info);
  static Napi::Value Peek(const Napi::CallbackInfo& info);
  static Napi::Value Refund(const Napi::CallbackInfo& info);
  // limiterReset(limiter, key): rl_limiter_reset
  static Napi::Value Reset(const Napi::CallbackInfo& info);
  // limiterAcquireBatch(limiter, [{ key, cost = 1 }, ...]) ->
  // rl_limiter_acquire_batch: a Float64Array of the decisions
  static Napi::Value AcquireBatch(const Napi::CallbackInfo& info);
  // limiterAcquireBatchEach(limiter, requests) ->
  // rl_limiter_acquire_batch_each: [decisions, [status], [error or null]]
  static Napi::Value AcquireBatchEach(const Napi::CallbackInfo& info);
  // limiterCallAsync(limiter, op, key, cost, timeoutUs, callback):
  // rl_limiter_call_async; callback(error, ...decision fields)
  static Napi::Value CallAsync(const Napi::CallbackInfo& info);
  // limiterAcquireWaitStart(limiter, key, cost, requestTimeoutUs, timeoutUs,
  // callback) -> wait handle: rl_limiter_acquire_wait_start; callback as
  // limiterCallAsync's. rl_wait_free runs when the handle is collected.
  static Napi::Value AcquireWaitStart(const Napi::CallbackInfo& info);
  // waitCancel(wait): rl_wait_cancel; the call also stops holding the
  // process open (its callback still runs).
  static Napi::Value WaitCancel(const Napi::CallbackInfo& info);
  // limiterAcquireBatchAsync(limiter, requests, callback):
  // rl_limiter_acquire_batch_async_versioned (this rl.h's decisions);
  // callback(error, Float64Array of the decisions)
  static Napi::Value AcquireBatchAsync(const Napi::CallbackInfo& info);
  // limiterAcquireBatchEachAsync(limiter, requests, callback):
  // rl_limiter_acquire_batch_each_async; callback(decisions, [status],
  // [error or null])
  static Napi::Value AcquireBatchEachAsync(const Napi::CallbackInfo& info);

 private:
  Limiter(Store* store, rl_limiter* handle);
  ~Limiter();

  using SyncCall = rl_status (*)(rl_limiter*, const rl_request*, rl_decision*, rl_error**);
  // limiterAcquire, limiterPeek and limiterRefund, by their rl_* function.
  template <SyncCall call>
  static Napi::Value Sync(const Napi::CallbackInfo& info);

  static Limiter* Unwrap(Napi::Value handle);
  // RL_E_SHUTDOWN once the store is closed: nothing reaches librl then
  // (its thread-safe function is released: no completion could reach JS).
  void ThrowIfClosed(Napi::Env env) const;

  Store* store_;
  rl_limiter* handle_;
};

}  // namespace rlnode
