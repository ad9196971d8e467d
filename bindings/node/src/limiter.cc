#include "limiter.h"

#include <string>
#include <vector>

#include "args.h"
#include "errors.h"
#include "pending_call.h"
#include "store.h"

namespace rlnode {
namespace {

constexpr napi_type_tag kLimiterTag = {0x3f1e9a7b5c2d4e60ULL, 0xa4b8c6d2e0f13579ULL};

rl_op OpArg(Napi::Value value) {
  const int64_t op = Int64Arg(value, "op");
  if (op < RL_OP_ACQUIRE || op > RL_OP_RESET) ThrowTypeError(value.Env(), "op: is not an rl_op");
  return static_cast<rl_op>(op);
}

// The decision of a sync call on a local store.
rl_status CallSync(rl_limiter* limiter, rl_op op, const rl_request& request, rl_decision* decision,
                   rl_error** err) {
  switch (op) {
    case RL_OP_ACQUIRE: return rl_limiter_acquire(limiter, &request, decision, err);
    case RL_OP_PEEK: return rl_limiter_peek(limiter, &request, decision, err);
    case RL_OP_REFUND: return rl_limiter_refund(limiter, &request, decision, err);
    case RL_OP_RESET: return rl_limiter_reset(limiter, request.key, request.key_len, err);
  }
  return RL_E_INVALID_ARG;
}

rl_decision EmptyDecision() {
  return RL_DECISION_INIT;
}

rl_request Request(const KeyArg& key, int64_t cost, int64_t timeout_us) {
  rl_request r = RL_REQUEST_INIT;
  r.key = key.data();
  r.key_len = key.size();
  r.cost = cost;
  r.timeout_us = timeout_us;
  return r;
}

// An optional trailing duration in us: undefined is 0 (the store's default).
int64_t OptionalUs(Napi::Value value, const std::string& what) {
  return value.IsUndefined() ? 0 : Int64Arg(value, what);
}

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

void Limiter::ThrowIfClosed(Napi::Env env) const {
  if (store_->closed()) ThrowRlError(env, RL_E_SHUTDOWN, "store: closed");
}

Napi::Value Limiter::Call(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const rl_op op = OpArg(info[1]);
  KeyArg key(info[2], "key");
  const int64_t cost = op == RL_OP_RESET ? 0 : Int64Arg(info[3], "cost");
  const int64_t timeout_us = OptionalUs(info[4], "timeoutUs");
  limiter->ThrowIfClosed(env);
  const rl_request request = Request(key, cost, timeout_us);
  rl_error* err = nullptr;

  if (limiter->store_->local()) {
    rl_decision decision = EmptyDecision();
    ThrowIfFailed(env, CallSync(limiter->handle_, op, request, &decision, &err), err);
    StoreLastDecision(env, decision);
    return env.Undefined();
  }

  napi_value promise = nullptr;
  PendingCall* call =
      limiter->store_->Begin(env, op == RL_OP_RESET ? Answer::nothing : Answer::decision, &promise);
  const rl_status status =
      rl_limiter_call_async(limiter->handle_, op, &request, OnDecision, call, &err);
  if (status != RL_OK) {
    limiter->store_->Abandon(call, MakeRlError(env, status, rl_error_message(err)));
    rl_error_free(err);
  }
  return Napi::Value(env, promise);
}

Napi::Value Limiter::TryAcquire(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  KeyArg key(info[1], "key");
  const int64_t cost = Int64Arg(info[2], "cost");
  limiter->ThrowIfClosed(env);
  if (!limiter->store_->local()) {
    ThrowRlError(env, RL_E_UNSUPPORTED,
                 "tryAcquire: only an inline memory:// store decides without waiting; on this "
                 "store it would block the event loop for a round trip: use acquire()");
  }
  const rl_request request = Request(key, cost, 0);
  rl_decision decision = EmptyDecision();
  rl_error* err = nullptr;
  ThrowIfFailed(env, rl_limiter_acquire(limiter->handle_, &request, &decision, &err), err);
  StoreLastDecision(env, decision);
  return env.Undefined();
}

namespace {

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

Napi::Value Limiter::Batch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const BatchArg requests(info[1]);
  limiter->ThrowIfClosed(env);
  rl_error* err = nullptr;

  if (limiter->store_->local()) {
    std::vector<rl_decision> decisions(requests.size(), EmptyDecision());
    ThrowIfFailed(env,
                  rl_limiter_acquire_batch(limiter->handle_, requests.data(), requests.size(),
                                           decisions.data(), &err),
                  err);
    return DecisionArray(env, decisions);
  }

  napi_value promise = nullptr;
  PendingCall* call = limiter->store_->Begin(env, Answer::decisions, &promise);
  // Decisions of this rl.h's version: OnDecisions reads an array of rl_decision.
  const rl_status status =
      rl_limiter_acquire_batch_async_versioned(limiter->handle_, requests.data(), requests.size(),
                                               RL_DECISION_VERSION, OnDecisions, call, &err);
  if (status != RL_OK) {
    limiter->store_->Abandon(call, MakeRlError(env, status, rl_error_message(err)));
    rl_error_free(err);
  }
  return Napi::Value(env, promise);
}

Napi::Value Limiter::BatchEach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  const BatchArg requests(info[1]);
  limiter->ThrowIfClosed(env);
  rl_error* err = nullptr;

  if (limiter->store_->local()) {
    const size_t n = requests.size();
    std::vector<rl_decision> decisions(n, EmptyDecision());
    std::vector<rl_status> statuses(n, RL_OK);
    std::vector<rl_error*> errors(n, nullptr);
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
    return SettledArray(env, decisions, statuses, messages);
  }

  napi_value promise = nullptr;
  PendingCall* call = limiter->store_->Begin(env, Answer::settled, &promise);
  // Decisions of this rl.h's version: OnEach reads an array of rl_decision.
  const rl_status status = rl_limiter_acquire_batch_each_async(
      limiter->handle_, requests.data(), requests.size(), RL_DECISION_VERSION, OnEach, call, &err);
  if (status != RL_OK) {
    limiter->store_->Abandon(call, MakeRlError(env, status, rl_error_message(err)));
    rl_error_free(err);
  }
  return Napi::Value(env, promise);
}

Napi::Value Limiter::Name(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), rl_limiter_name(Unwrap(info[0])->handle_));
}

Napi::Value Limiter::AcquireWait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Limiter* limiter = Unwrap(info[0]);
  KeyArg key(info[1], "key");
  const int64_t cost = Int64Arg(info[2], "cost");
  const int64_t wait_us = Int64Arg(info[3], "timeoutUs");
  const int64_t timeout_us = OptionalUs(info[4], "requestTimeoutUs");
  limiter->ThrowIfClosed(env);
  const rl_request request = Request(key, cost, timeout_us);
  // Always async, on every store: the wait is a timer on rl's thread.
  napi_value promise = nullptr;
  PendingCall* call = limiter->store_->Begin(env, Answer::decision, &promise);
  rl_error* err = nullptr;
  rl_wait* wait = nullptr;
  const rl_status status = rl_limiter_acquire_wait_start(limiter->handle_, &request, wait_us,
                                                         OnDecision, call, &wait, &err);
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Value(env, promise));
  if (status != RL_OK) {
    limiter->store_->Abandon(call, MakeRlError(env, status, rl_error_message(err)));
    rl_error_free(err);
    out.Set(1u, env.Undefined());
    return out;
  }
  // The handle lives as long as JS holds it, after the answer too: an
  // abort that comes after the answer was delivered still cancels.
  auto* ref = new WaitRef{wait, limiter->store_->Register(call)};
  out.Set(1u, Napi::External<WaitRef>::New(env, ref, [](Napi::Env, WaitRef* r) {
            rl_wait_free(r->wait);
            delete r;
          }));
  return out;
}

Napi::Value Limiter::AbandonWait(const Napi::CallbackInfo& info) {
  Limiter* limiter = Unwrap(info[0]);
  if (!info[1].IsExternal()) ThrowTypeError(info.Env(), "wait: must be a wait of acquireWait");
  const WaitRef* ref = info[1].As<Napi::External<WaitRef>>().Data();
  // librl ends the wait and gives back an admission nobody took, once.
  rl_wait_cancel(ref->wait);
  limiter->store_->AbandonWait(ref->id);
  return info.Env().Undefined();
}

}  // namespace rlnode
