// A store handle for JS: the rl_store, the one thread-safe function that
// carries every completion of its calls from rl's I/O thread to the JS
// thread, and the rules that keep both safe:
// - the thread-safe function is unref'd at once, and ref'd only while calls
//   are in flight, so an idle store never holds the process open;
// - it is released by close(), or by an environment cleanup hook when the
//   environment (process or worker_thread) ends first, never afterwards;
// - the Store object lives until its JS handle, its thread-safe function and
//   every limiter made from it are gone (holders_, JS thread only).
#pragma once

#include <napi.h>
#include <rl/rl.h>

#include <mutex>
#include <unordered_map>
#include <vector>

#include "pending_call.h"

namespace rlnode {

class Store {
 public:
  // open(url, settings, inlineLocal) -> Promise<store handle>; opens off the
  // JS thread. inlineLocal: a store librl describes as in process
  // (rl_store_info.in_process: memory://) answers on the JS thread.
  static Napi::Value Open(const Napi::CallbackInfo& info);
  // close(store): pending calls reject with RL_E_SHUTDOWN. Idempotent.
  static Napi::Value Close(const Napi::CallbackInfo& info);
  // clockSet(store, us) / clockAdvance(store, us): the manual clock.
  static Napi::Value ClockSet(const Napi::CallbackInfo& info);
  static Napi::Value ClockAdvance(const Napi::CallbackInfo& info);
  // describe(store) -> { inProcess, manualClock, scheme, displayUrl,
  // decidesWith } (rl_store_describe, rl_store_display_url)
  static Napi::Value Describe(const Napi::CallbackInfo& info);
  // stats(store) -> rl_store_get_stats as a plain object (see lib/store.js)
  static Napi::Value Stats(const Napi::CallbackInfo& info);
  // metrics(store) -> rl_store_format_metrics: the Prometheus text, as is
  static Napi::Value Metrics(const Napi::CallbackInfo& info);

  // The Store behind a JS handle; TypeError for anything else.
  static Store* Unwrap(Napi::Value handle, const char* what);

  rl_store* handle() const { return handle_; }
  bool closed() const { return closed_; }
  // Memory stores answer at once: their sync C calls never block on I/O.
  bool local() const { return local_; }

  // An asynchronous call begins (JS thread): a new PendingCall whose
  // promise goes to *promise. Then exactly one of: librl completes it
  // (Complete, any thread), or Abandon rejects it with error when librl
  // refused to start it.
  PendingCall* Begin(Napi::Env env, Answer answer, napi_value* promise);
  void Abandon(PendingCall* call, napi_value error);
  void Complete(PendingCall* call);
  // A wait JS may give up on: numbered, and findable by its number until
  // it is delivered (JS thread only).
  uint64_t Register(PendingCall* call);
  // JS gave up on wait `id` (no-op once delivered): it stops holding the
  // process open; its promise still settles, unheard.
  void AbandonWait(uint64_t id);

  void Hold() { ++holders_; }
  void Drop();

 private:
  Store(napi_env env, rl_store* handle, bool local);
  ~Store();

  Napi::Value MakeHandle(Napi::Env env);
  void CloseNow();
  void CallEnded();
  void OnHandleCollected();

  static void Deliver(napi_env env, napi_value, void* context, void*);
  static void OnTsfnFinalized(napi_env, void* data, void*);
  static void OnEnvCleanup(void* arg);

  napi_env env_;
  rl_store* handle_;
  const bool local_;
  napi_threadsafe_function tsfn_ = nullptr;
  bool closed_ = false;
  // Its JS handle was collected while calls were in flight: close after them.
  bool orphaned_ = false;
  size_t in_flight_ = 0;
  int holders_ = 0;

  uint64_t next_wait_id_ = 1;
  std::unordered_map<uint64_t, PendingCall*> waits_;  // not yet delivered

  std::mutex mutex_;
  std::vector<PendingCall*> completed_;  // guarded by mutex_
  // Deliver's batch, swapped with completed_ and kept (emptied) between
  // batches: neither vector grows from nothing again (JS thread only).
  std::vector<PendingCall*> delivering_;
};

}  // namespace rlnode
