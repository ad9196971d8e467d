// A store handle for JS: the rl_store, the one thread-safe function that
// carries every completion of its calls from rl's I/O thread to the JS
// thread, and the rules that keep both safe:
// - the thread-safe function is unref'd at once, and ref'd only while calls
//   are in flight, so an idle store never holds the process open;
// - it is released by storeClose(), or by an environment cleanup hook when the
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
  // storeOpen(url, [key, value, ...], callback): rl_store_open, run on
  // libuv's thread pool (opening a Redis store may connect); callback(error,
  // store handle) on the JS thread.
  static Napi::Value Open(const Napi::CallbackInfo& info);
  // storeClose(store): rl_store_close; pending calls complete with
  // RL_E_SHUTDOWN. Idempotent. (rl_store_free runs when the handle, its
  // limiters and its calls are all gone.)
  static Napi::Value Close(const Napi::CallbackInfo& info);
  // storeClockSet(store, us) / storeClockAdvance(store, us): the manual clock.
  static Napi::Value ClockSet(const Napi::CallbackInfo& info);
  static Napi::Value ClockAdvance(const Napi::CallbackInfo& info);
  // storeDescribe(store) -> rl_store_info: { inProcess, manualClock, scheme,
  // decidesWith: { scriptMode, luaMode, moduleNodes, luaNodes } | null }
  static Napi::Value Describe(const Napi::CallbackInfo& info);
  // storeDisplayUrl(store) -> rl_store_display_url
  static Napi::Value DisplayUrl(const Napi::CallbackInfo& info);
  // storeGetStats(store) -> rl_store_stats as a plain object (see lib/store.js)
  static Napi::Value GetStats(const Napi::CallbackInfo& info);
  // storeMetrics(store) -> rl_store_metrics: the Prometheus text, as is
  static Napi::Value Metrics(const Napi::CallbackInfo& info);

  // The Store behind a JS handle; TypeError for anything else.
  static Store* Unwrap(Napi::Value handle, const char* what);

  rl_store* handle() const { return handle_; }
  bool closed() const { return closed_; }

  // An asynchronous call begins (JS thread): a new PendingCall that will
  // run callback (TypeError if it is not a function). Then exactly one of:
  // librl completes it (Complete, any thread), or Abandon drops it when
  // librl refused to start it.
  PendingCall* Begin(Napi::Env env, Answer answer, Napi::Value callback);
  void Abandon(PendingCall* call);
  void Complete(PendingCall* call);
  // A wait JS may give up on: numbered, and findable by its number until
  // it is delivered (JS thread only).
  uint64_t Register(PendingCall* call);
  // JS gave up on wait `id` (no-op once delivered): it stops holding the
  // process open; its callback still runs.
  void AbandonWait(uint64_t id);

  void Hold() { ++holders_; }
  void Drop();

 private:
  Store(napi_env env, rl_store* handle);
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
