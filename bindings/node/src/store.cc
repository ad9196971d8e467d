#include "store.h"

#include <iterator>
#include <memory>
#include <string>

#include "args.h"
#include "errors.h"

namespace rlnode {
namespace {

// Tags the externals that are store handles, so that no other value (a
// limiter handle included) is ever taken for one.
constexpr napi_type_tag kStoreTag = {0x72c4a1d0e55b4f1aULL, 0x9e3b7c2d4a6f8e01ULL};

// Runs rl_store_open on libuv's thread pool: opening a Redis store may
// connect, and the JS thread must never wait for the network.
class OpenWorker : public Napi::AsyncWorker {
 public:
  OpenWorker(Napi::Function callback, std::string url, std::unique_ptr<ConfigArg> cfg,
             std::function<Napi::Value(Napi::Env, rl_store*)> make_handle)
      : Napi::AsyncWorker(callback, "rl.storeOpen"),
        url_(std::move(url)),
        cfg_(std::move(cfg)),
        make_handle_(std::move(make_handle)) {}

  ~OpenWorker() override {
    rl_error_free(err_);
    rl_store_free(store_);  // only set when OnOK did not take it
  }

  void Execute() override { status_ = rl_store_open(url_.c_str(), cfg_->get(), &store_, &err_); }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    Napi::Value error = env.Null();
    Napi::Value store = env.Undefined();
    try {
      if (status_ != RL_OK) {
        error = MakeRlError(env, status_, rl_error_message(err_));
      } else {
        rl_store* handle = store_;
        store_ = nullptr;
        store = make_handle_(env, handle);
      }
    } catch (const Napi::Error& e) {
      error = e.Value();
    }
    Callback().Call({error, store});
  }

 private:
  std::string url_;
  std::unique_ptr<ConfigArg> cfg_;
  std::function<Napi::Value(Napi::Env, rl_store*)> make_handle_;
  rl_status status_ = RL_OK;
  rl_store* store_ = nullptr;
  rl_error* err_ = nullptr;
};

}  // namespace

Store::Store(napi_env env, rl_store* handle) : env_(env), handle_(handle) {}

Store::~Store() {
  // Completions that never reached JS: the environment ended first.
  for (PendingCall* call : completed_) delete call;
  rl_store_free(handle_);
}

Napi::Value Store::Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string url = StringArg(info[0], "url");
  auto cfg = std::make_unique<ConfigArg>(info[1], "store settings");
  if (!info[2].IsFunction()) ThrowTypeError(env, "callback: must be a function");
  auto make_handle = [](Napi::Env env, rl_store* handle) {
    return (new Store(env, handle))->MakeHandle(env);
  };
  (new OpenWorker(info[2].As<Napi::Function>(), std::move(url), std::move(cfg), make_handle))
      ->Queue();
  return env.Undefined();
}

// Called once, on the JS thread, right after the store opened.
Napi::Value Store::MakeHandle(Napi::Env env) {
  napi_status s =
      napi_create_threadsafe_function(env, nullptr, nullptr, Napi::String::New(env, "rl.store"), 0,
                                      1, this, OnTsfnFinalized, this, Deliver, &tsfn_);
  if (s != napi_ok) {
    delete this;
    throw Napi::Error::New(env, "rl: could not create the store's thread-safe function");
  }
  napi_unref_threadsafe_function(env, tsfn_);
  holders_ = 1;  // the thread-safe function, until it is finalized
  napi_add_env_cleanup_hook(env, OnEnvCleanup, this);
  Hold();  // the JS handle, until it is collected
  auto handle = Napi::External<Store>::New(
      env, this, [](Napi::Env, Store* store) { store->OnHandleCollected(); });
  handle.TypeTag(&kStoreTag);
  return handle;
}

Store* Store::Unwrap(Napi::Value handle, const char* what) {
  if (!handle.IsExternal() || !handle.As<Napi::External<Store>>().CheckTypeTag(&kStoreTag)) {
    ThrowTypeError(handle.Env(), std::string(what) + ": is not an rl store handle");
  }
  return handle.As<Napi::External<Store>>().Data();
}

Napi::Value Store::Close(const Napi::CallbackInfo& info) {
  Unwrap(info[0], "store")->CloseNow();
  return info.Env().Undefined();
}

void Store::CloseNow() {
  if (closed_) return;
  closed_ = true;
  napi_remove_env_cleanup_hook(env_, OnEnvCleanup, this);
  // Every pending call completes (with RL_E_SHUTDOWN) before this returns;
  // their completions are queued on the thread-safe function, which a
  // plain release still delivers before it finalizes.
  rl_store_close(handle_);
  napi_release_threadsafe_function(tsfn_, napi_tsfn_release);
}

void Store::OnEnvCleanup(void* arg) {
  auto* store = static_cast<Store*>(arg);
  store->closed_ = true;
  rl_store_close(store->handle_);
  // The environment is ending: nothing more will be delivered.
  napi_release_threadsafe_function(store->tsfn_, napi_tsfn_abort);
}

void Store::OnHandleCollected() {
  if (!closed_) {
    if (in_flight_ == 0) {
      CloseNow();
    } else {
      orphaned_ = true;
    }
  }
  Drop();
}

void Store::OnTsfnFinalized(napi_env, void* data, void*) {
  static_cast<Store*>(data)->Drop();
}

void Store::Drop() {
  if (--holders_ == 0) delete this;
}

PendingCall* Store::Begin(Napi::Env env, Answer answer, Napi::Value callback) {
  if (!callback.IsFunction()) ThrowTypeError(env, "callback: must be a function");
  auto* call = new PendingCall();
  call->store = this;
  call->answer = answer;
  const napi_status made = napi_create_reference(env, callback, 1, &call->callback);
  if (made != napi_ok) {
    delete call;
    NAPI_THROW_IF_FAILED(env, made, nullptr);
  }
  // In flight, a call keeps the process alive until its answer arrives.
  if (in_flight_++ == 0) napi_ref_threadsafe_function(env, tsfn_);
  return call;
}

void Store::Abandon(PendingCall* call) {
  napi_delete_reference(env_, call->callback);
  delete call;
  CallEnded();
}

void Store::Complete(PendingCall* call) {
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    first = completed_.empty();
    completed_.push_back(call);
  }
  // One wake-up per batch of completions: Deliver drains them all.
  if (first) napi_call_threadsafe_function(tsfn_, nullptr, napi_tsfn_nonblocking);
}

void Store::Deliver(napi_env env, napi_value, void* context, void*) {
  if (env == nullptr) return;  // torn down: ~Store frees what is left
  auto* store = static_cast<Store*>(context);
  std::vector<PendingCall*>& calls = store->delivering_;
  {
    std::lock_guard lock(store->mutex_);
    calls.swap(store->completed_);
  }
  bool js_runs = true;
  for (PendingCall* call : calls) {
    if (js_runs) {
      Napi::HandleScope scope(env);
      // Running it only fails when the environment is going away: the
      // rest of the batch is then only freed.
      js_runs = call->Run(env);
      napi_delete_reference(env, call->callback);
    }
    if (call->wait_id != 0) store->waits_.erase(call->wait_id);
    const bool counted = !call->abandoned;
    delete call;
    if (counted) store->CallEnded();
  }
  // (Nothing above frees the store: its holders go in finalizers, which
  // Node runs later, from the event loop.)
  calls.clear();
}

uint64_t Store::Register(PendingCall* call) {
  call->wait_id = next_wait_id_++;
  waits_.emplace(call->wait_id, call);
  return call->wait_id;
}

void Store::AbandonWait(uint64_t id) {
  auto it = waits_.find(id);
  if (it == waits_.end() || it->second->abandoned) return;
  it->second->abandoned = true;
  CallEnded();
}

void Store::CallEnded() {
  if (--in_flight_ > 0) return;
  napi_unref_threadsafe_function(env_, tsfn_);
  if (orphaned_) CloseNow();
}

Napi::Value Store::ClockSet(const Napi::CallbackInfo& info) {
  Store* store = Unwrap(info[0], "store");
  const int64_t now_us = Int64Arg(info[1], "us");
  rl_error* err = nullptr;
  ThrowIfFailed(info.Env(), rl_store_clock_set(store->handle_, now_us, &err), err);
  return info.Env().Undefined();
}

Napi::Value Store::ClockAdvance(const Napi::CallbackInfo& info) {
  Store* store = Unwrap(info[0], "store");
  const int64_t delta_us = Int64Arg(info[1], "us");
  rl_error* err = nullptr;
  ThrowIfFailed(info.Env(), rl_store_clock_advance(store->handle_, delta_us, &err), err);
  return info.Env().Undefined();
}

Napi::Value Store::Describe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Store* store = Unwrap(info[0], "store");
  rl_store_info described = RL_STORE_INFO_INIT;
  rl_error* err = nullptr;
  ThrowIfFailed(env, rl_store_describe(store->handle_, &described, &err), err);
  Napi::Object out = Napi::Object::New(env);
  out.Set("inProcess", Napi::Boolean::New(env, described.in_process != 0));
  out.Set("manualClock", Napi::Boolean::New(env, described.manual_clock != 0));
  out.Set("scheme", Napi::String::New(env, described.scheme));
  // What decides in Redis (rl_store_info version 2); null for memory://.
  if (described.script_mode != nullptr) {
    Napi::Object with = Napi::Object::New(env);
    with.Set("scriptMode", Napi::String::New(env, described.script_mode));
    with.Set("luaMode", Napi::String::New(env, described.lua_mode));
    with.Set("moduleNodes", Napi::Number::New(env, described.module_nodes));
    with.Set("luaNodes", Napi::Number::New(env, described.lua_nodes));
    out.Set("decidesWith", with);
  } else {
    out.Set("decidesWith", env.Null());
  }
  return out;
}

Napi::Value Store::DisplayUrl(const Napi::CallbackInfo& info) {
  Store* store = Unwrap(info[0], "store");
  return Napi::String::New(info.Env(), rl_store_display_url(store->handle_));
}

}  // namespace rlnode

namespace rlnode {
namespace {

Napi::Array NumberArray(Napi::Env env, const uint64_t* values, size_t count) {
  Napi::Array out = Napi::Array::New(env, count);
  for (size_t i = 0; i < count; ++i) {
    out.Set(i, Napi::Number::New(env, static_cast<double>(values[i])));
  }
  return out;
}

}  // namespace

// The raw counters; lib/store.js names them (sources, status names, ms).
Napi::Value Store::GetStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Store* store = Unwrap(info[0], "store");
  rl_store_stats stats = RL_STORE_STATS_INIT;
  rl_error* err = nullptr;
  ThrowIfFailed(env, rl_store_get_stats(store->handle_, &stats, &err), err);
  Napi::Object out = Napi::Object::New(env);
  out.Set("breakerState", Napi::Number::New(env, stats.breaker_state));
  out.Set("breakerOpened", Napi::Number::New(env, static_cast<double>(stats.breaker_opened)));
  out.Set("allowed", NumberArray(env, stats.allowed, std::size(stats.allowed)));
  out.Set("denied", NumberArray(env, stats.denied, std::size(stats.denied)));
  out.Set("failures", NumberArray(env, stats.failures, std::size(stats.failures)));
  out.Set("roundTrips", Napi::Number::New(env, static_cast<double>(stats.round_trips)));
  const int64_t quantiles[] = {stats.round_trip_p50_us, stats.round_trip_p95_us,
                               stats.round_trip_p99_us, stats.round_trip_max_us};
  Napi::Array us = Napi::Array::New(env, std::size(quantiles));
  for (size_t i = 0; i < std::size(quantiles); ++i) {
    us.Set(i, Napi::Number::New(env, static_cast<double>(quantiles[i])));
  }
  out.Set("roundTripUs", us);
  const uint64_t leases[] = {stats.leases_taken, stats.lease_units_leased, stats.lease_units_unused,
                             stats.lease_units_returned, stats.lease_decisions};
  out.Set("leases", NumberArray(env, leases, std::size(leases)));
  return out;
}

Napi::Value Store::Metrics(const Napi::CallbackInfo& info) {
  Store* store = Unwrap(info[0], "store");
  char* text = rl_store_metrics(store->handle_);
  // rl_store_metrics's NULL: its only failure.
  if (text == nullptr) ThrowRlError(info.Env(), RL_E_NO_MEMORY, "out of memory formatting metrics");
  Napi::String out = Napi::String::New(info.Env(), text);
  rl_string_free(text);
  return out;
}

}  // namespace rlnode
