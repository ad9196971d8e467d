#include "limiter.h"

#include <string>
#include <vector>

#include "addon_data.h"
#include "args.h"
#include "errors.h"
#include "pending_call.h"
#include "store.h"

namespace rlnode {
namespace {

constexpr napi_type_tag kLimiterTag = {0x3f1e9a7b5c2d4e60ULL, 0xa4b8c6d2e0f13579ULL};
constexpr napi_type_tag kWaitTag = {0x5d08b2e94c7a1f36ULL, 0xc1e7a3940b6d28f5ULL};

rl_op OpArg(Napi::Value value) {
  const int64_t op = Int64Arg(value, "op");
  if (op < RL_OP_ACQUIRE || op > RL_OP_RESET) ThrowTypeError(value.Env(), "op: is not an rl_op");
  return static_cast<rl_op>(op);
}

rl_request Request(const KeyArg& key, int64_t cost, int64_t timeout_us) {
  rl_request r = RL_REQUEST_INIT;
  r.key = key.data();
  r.key_len = key.size();
  r.cost = cost;
  r.timeout_us = timeout_us;
  return r;
}

// What JS holds of a wait: librl's handle, and its store's number for it.
struct WaitRef {
  rl_wait* wait;
  Store* store;
  uint64_t id;
};

// The requests of a batch: [{ key, cost = 1 }, ...], each key copied (a
// string's UTF-8 would not outlive its KeyArg).
class BatchArg {
 public:
  explicit BatchArg(Napi::Value value) {
    Napi::Env env = value.Env();
    if (!value.IsArray())
      ThrowTypeError(env, "requests: must be an array of { key, cost } objects");
    auto items = value.As<Napi::Array>();
    keys_.reserve(items.Length());
    requests_.reserve(items.Length());
    for (uint32_t i = 0; i < items.Length(); ++i) {
      const std::string at = "requests[" + std::to_string(i) + "]";
      Napi::Value item = items.Get(i);
      if (!item.IsObject()) ThrowTypeError(env, at + ": must be a { key, cost } object");
      Napi::Value cost = item.As<Napi::Object>().Get("cost");
      KeyArg key(item.As<Napi::Object>().Get("key"), at + ".key");
      keys_.emplace_back(key.data(), key.size());
      rl_request request = RL_REQUEST_INIT;
      request.cost = cost.IsUndefined() ? 1 : Int64Arg(cost, at + ".cost");
      requests_.push_back(request);
    }
    for (size_t i = 0; i < keys_.size(); ++i) {
      requests_[i].key = keys_[i].data();
      requests_[i].key_len = keys_[i].size();
    }
  }

  const rl_request* data() const { return requests_.data(); }
  size_t size() const { return requests_.size(); }

 private:
  std::vector<std::string> keys_;
  std::vector<rl_request> requests_;
};

}  // namespace

Limiter::Limiter(Store* store, rl_limiter* handle) : store_(store), handle_(handle) {
  store_->Hold();
}

Limiter::~Limiter() {
  rl_limiter_free(handle_);  // calls in flight still complete
  store_->Drop();
}

Napi::Value Limiter::New(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Store* store = Store::Unwrap(info[0], "store");
  ConfigArg cfg(info[1], "limiter settings");
  rl_limiter* handle = nullptr;
  rl_error* err = nullptr;
  ThrowIfFailed(env, rl_limiter_new(store->handle(), cfg.get(), &handle, &err), err);
  auto* limiter = new Limiter(store, handle);
  auto external =
      Napi::External<Limiter>::New(env, limiter, [](Napi::Env, Limiter* l) { delete l; });
  external.TypeTag(&kLimiterTag);
  return external;
}

Limiter* Limiter::Unwrap(Napi::Value handle) {
  // napi_get_value_external fails, without throwing, on anything but an
  // External: no napi_typeof first (one N-API call less per decision).
  void* data = nullptr;
  if (napi_get_value_external(handle.Env(), handle, &data) != napi_ok ||
      !handle.As<Napi::External<Limiter>>().CheckTypeTag(&kLimiterTag)) {
    ThrowTypeError(handle.Env(), "limiter: is not an rl limiter handle");
  }
  return static_cast<Limiter*>(data);
}

void Limiter::ThrowIfClosed(Napi::Env env) const {
  if (store_->closed()) ThrowRlError(env, RL_E_SHUTDOWN, "store: closed");
}

Napi::Value Limiter::Name(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), rl_limiter_name(Unwrap(info[0])->handle_));
}

Napi::Value Limiter::Limits(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  std::vector<rl_limit_info> limits(rl_limiter_limits(limiter->handle_, nullptr, 0));
  rl_limiter_limits(limiter->handle_, limits.data(), limits.size());
  Napi::Array out = Napi::Array::New(env, limits.size());
  for (size_t i = 0; i < limits.size(); ++i) {
    Napi::Object limit = Napi::Object::New(env);
    limit.Set("limit", Napi::Number::New(env, static_cast<double>(limits[i].limit)));
    limit.Set("windowUs", Napi::Number::New(env, static_cast<double>(limits[i].window_us)));
    limit.Set("burst", Napi::Number::New(env, static_cast<double>(limits[i].burst)));
    out.Set(i, limit);
  }
  return out;
}

// The hot path of a decision on memory://, so no N-API call it can do
// without: timeoutUs is read only when given, and the decision goes to
// memory JS already holds.
template <Limiter::SyncCall call>
Napi::Value Limiter::Sync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  KeyArg key(info[1], "key");
  const int64_t cost = Int64Arg(info[2], "cost");
  const int64_t timeout_us = info.Length() > 3 ? Int64Arg(info[3], "timeoutUs") : 0;
  limiter->ThrowIfClosed(env);
  const rl_request request = Request(key, cost, timeout_us);
  rl_decision decision = RL_DECISION_INIT;
  rl_error* err = nullptr;
  ThrowIfFailed(env, call(limiter->handle_, &request, &decision, &err), err);
  PutDecision(DataOf(env).decision_data, decision);
  return env.Undefined();
}

Napi::Value Limiter::Acquire(const Napi::CallbackInfo& info) {
  return Sync<rl_limiter_acquire>(info);
}

Napi::Value Limiter::Peek(const Napi::CallbackInfo& info) {
  return Sync<rl_limiter_peek>(info);
}

Napi::Value Limiter::Refund(const Napi::CallbackInfo& info) {
  return Sync<rl_limiter_refund>(info);
}

Napi::Value Limiter::Reset(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  KeyArg key(info[1], "key");
  limiter->ThrowIfClosed(env);
  rl_error* err = nullptr;
  ThrowIfFailed(env, rl_limiter_reset(limiter->handle_, key.data(), key.size(), &err), err);
  return env.Undefined();
}

Napi::Value Limiter::AcquireBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const BatchArg requests(info[1]);
  limiter->ThrowIfClosed(env);
  std::vector<rl_decision> decisions(requests.size(), rl_decision RL_DECISION_INIT);
  rl_error* err = nullptr;
  ThrowIfFailed(env,
                rl_limiter_acquire_batch(limiter->handle_, requests.data(), requests.size(),
                                         decisions.data(), &err),
                err);
  return DecisionArray(env, decisions);
}

Napi::Value Limiter::AcquireBatchEach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const BatchArg requests(info[1]);
  limiter->ThrowIfClosed(env);
  const size_t n = requests.size();
  std::vector<rl_decision> decisions(n, rl_decision RL_DECISION_INIT);
  std::vector<rl_status> statuses(n, RL_OK);
  std::vector<rl_error*> errors(n, nullptr);
  rl_error* err = nullptr;
  ThrowIfFailed(
      env,
      rl_limiter_acquire_batch_each(limiter->handle_, requests.data(), n, decisions.data(),
                                    statuses.data(), errors.data(), &err),
      err);
  std::vector<std::string> messages(n);
  for (size_t i = 0; i < n; ++i) {
    if (errors[i] != nullptr) messages[i] = rl_error_message(errors[i]);
    rl_error_free(errors[i]);
  }
  return EachArray(env, decisions, statuses, messages);
}

Napi::Value Limiter::CallAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const rl_op op = OpArg(info[1]);
  KeyArg key(info[2], "key");
  const int64_t cost = op == RL_OP_RESET ? 0 : Int64Arg(info[3], "cost");
  const int64_t timeout_us = Int64Arg(info[4], "timeoutUs");
  limiter->ThrowIfClosed(env);
  const rl_request request = Request(key, cost, timeout_us);
  PendingCall* call = limiter->store_->Begin(env, Answer::decision, info[5]);
  rl_error* err = nullptr;
  const rl_status status =
      rl_limiter_call_async(limiter->handle_, op, &request, OnDecision, call, &err);
  if (status != RL_OK) limiter->store_->Abandon(call);
  ThrowIfFailed(env, status, err);
  return env.Undefined();
}

Napi::Value Limiter::AcquireWaitStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  KeyArg key(info[1], "key");
  const int64_t cost = Int64Arg(info[2], "cost");
  const int64_t request_timeout_us = Int64Arg(info[3], "requestTimeoutUs");
  const int64_t timeout_us = Int64Arg(info[4], "timeoutUs");
  limiter->ThrowIfClosed(env);
  const rl_request request = Request(key, cost, request_timeout_us);
  PendingCall* call = limiter->store_->Begin(env, Answer::decision, info[5]);
  rl_error* err = nullptr;
  rl_wait* wait = nullptr;
  const rl_status status = rl_limiter_acquire_wait_start(limiter->handle_, &request, timeout_us,
                                                         OnDecision, call, &wait, &err);
  if (status != RL_OK) limiter->store_->Abandon(call);
  ThrowIfFailed(env, status, err);
  // The handle lives as long as JS holds it, after the callback ran too: a
  // cancel that comes after the answer was delivered still refunds.
  Store* store = limiter->store_;
  store->Hold();
  auto* ref = new WaitRef{wait, store, store->Register(call)};
  auto handle = Napi::External<WaitRef>::New(env, ref, [](Napi::Env, WaitRef* r) {
    rl_wait_free(r->wait);
    r->store->Drop();
    delete r;
  });
  handle.TypeTag(&kWaitTag);
  return handle;
}

Napi::Value Limiter::WaitCancel(const Napi::CallbackInfo& info) {
  if (!info[0].IsExternal() || !info[0].As<Napi::External<WaitRef>>().CheckTypeTag(&kWaitTag)) {
    ThrowTypeError(info.Env(), "wait: must be a wait of limiterAcquireWaitStart");
  }
  const WaitRef* ref = info[0].As<Napi::External<WaitRef>>().Data();
  // librl ends the wait and gives back an admission nobody took, once.
  rl_wait_cancel(ref->wait);
  ref->store->AbandonWait(ref->id);
  return info.Env().Undefined();
}

Napi::Value Limiter::AcquireBatchAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const BatchArg requests(info[1]);
  limiter->ThrowIfClosed(env);
  PendingCall* call = limiter->store_->Begin(env, Answer::decisions, info[2]);
  rl_error* err = nullptr;
  // Decisions of this rl.h's version: OnDecisions reads an array of rl_decision.
  const rl_status status =
      rl_limiter_acquire_batch_async_versioned(limiter->handle_, requests.data(), requests.size(),
                                               RL_DECISION_VERSION, OnDecisions, call, &err);
  if (status != RL_OK) limiter->store_->Abandon(call);
  ThrowIfFailed(env, status, err);
  return env.Undefined();
}

Napi::Value Limiter::AcquireBatchEachAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const BatchArg requests(info[1]);
  limiter->ThrowIfClosed(env);
  PendingCall* call = limiter->store_->Begin(env, Answer::each, info[2]);
  rl_error* err = nullptr;
  // Decisions of this rl.h's version: OnEach reads an array of rl_decision.
  const rl_status status = rl_limiter_acquire_batch_each_async(
      limiter->handle_, requests.data(), requests.size(), RL_DECISION_VERSION, OnEach, call, &err);
  if (status != RL_OK) limiter->store_->Abandon(call);
  ThrowIfFailed(env, status, err);
  return env.Undefined();
}

}  // namespace rlnode
