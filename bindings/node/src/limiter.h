// A limiter handle for JS and its calls. On a local (memory://) store a call
// runs librl's sync function and answers at once; on any other store it
// starts librl's async function and returns a promise that the store's
// thread-safe function settles: the JS thread never waits on the network.
#pragma once

#include <napi.h>
#include <rl/rl.h>

namespace rlnode {

class Store;

class Limiter {
 public:
  // limiterNew(store, [key, value, ...]) -> limiter handle
  static Napi::Value New(const Napi::CallbackInfo& info);
  // call(limiter, op, key, cost, timeoutUs?): op is an rl_op; timeoutUs is
  // the request's deadline (rl_request.timeout_us). On a local store it
  // returns undefined and leaves the decision in lastDecision (see
  // lib/decision.js); else a promise of the decision (of undefined for reset).
  static Napi::Value Call(const Napi::CallbackInfo& info);
  // tryAcquire(limiter, key, cost): acquire on a local store only, its
  // decision left in lastDecision; RL_E_UNSUPPORTED on any other store (a
  // synchronous store round trip would block the event loop).
  static Napi::Value TryAcquire(const Napi::CallbackInfo& info);
  // batch(limiter, [{key, cost}, ...]) -> decisions, or a promise of them
  static Napi::Value Batch(const Napi::CallbackInfo& info);
  // batchEach(limiter, [{key, cost}, ...]) -> [{ status: 'fulfilled', value }
  // | { status: 'rejected', reason }, ...], or a promise of them
  static Napi::Value BatchEach(const Napi::CallbackInfo& info);
  // limits(limiter) -> [{ limit, windowUs, burst }, ...] as librl parsed them
  static Napi::Value Limits(const Napi::CallbackInfo& info);
  // name(limiter) -> its name setting, "default" when unset (rl_limiter_name)
  static Napi::Value Name(const Napi::CallbackInfo& info);
  // acquireWait(limiter, key, cost, timeoutUs, requestTimeoutUs?) ->
  // [promise of the decision, wait]: rl_limiter_acquire_wait_start on
  // every store (the wait is a timer on rl's thread, never on the JS one).
  static Napi::Value AcquireWait(const Napi::CallbackInfo& info);
  // abandonWait(limiter, wait): JS gave up (an aborted signal):
  // rl_wait_cancel, and the call stops holding the process open.
  static Napi::Value AbandonWait(const Napi::CallbackInfo& info);

 private:
  // What JS holds of a wait: librl's handle, and the store's number for it.
  struct WaitRef {
    rl_wait* wait;
    uint64_t id;
  };

  Limiter(Store* store, rl_limiter* handle);
  ~Limiter();

  static Limiter* Unwrap(Napi::Value handle);
  // RL_E_SHUTDOWN once the store is closed: nothing reaches librl then.
  void ThrowIfClosed(Napi::Env env) const;

  Store* store_;
  rl_limiter* handle_;
};

}  // namespace rlnode
