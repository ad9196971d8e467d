// The native layer: rl.h over N-API, one export per rl_* function, named
// after it in camelCase without rl_ (limiterAcquire is rl_limiter_acquire),
// listed in InitModule below. It chooses nothing: lib/ decides which to
// call (sync on an inline memory:// store, async elsewhere), wraps async
// ones in promises and turns failures into its JS class (init(errorOf)).
// - A failed call throws errorOf(status, message); a JS value of the wrong
//   type is a TypeError naming the argument, before anything reaches librl.
// - A sync call's decision goes to the `decision` export (a Float64Array,
//   pending_call.h gives its order), not into a new object: no allocation.
//   headerRendererRender reads its decision from there too.
// - An async rl_* function takes a JS callback (never a promise: the
//   callback is how rl.h completes, and lib chooses what to build from it),
//   run on the JS thread; it throws, and never calls back, when librl
//   refuses to start it.
#include <napi.h>
#include <rl/rl.h>

#include <cstdint>

#include "addon_data.h"
#include "args.h"
#include "errors.h"
#include "header_renderer.h"
#include "limiter.h"
#include "pending_call.h"
#include "store.h"

namespace rlnode {

AddonData& DataOf(Napi::Env env) {
  return *env.GetInstanceData<AddonData>();
}

namespace {

// init(errorOf): see AddonData.
Napi::Value Init(const Napi::CallbackInfo& info) {
  if (!info[0].IsFunction()) ThrowTypeError(info.Env(), "init: needs errorOf(status, message)");
  DataOf(info.Env()).error_of = Napi::Persistent(info[0].As<Napi::Function>());
  return info.Env().Undefined();
}

// A name of librl's static table (rl_status_name, rl_source_name, ...),
// null past the last.
template <const char* (*name_of)(int)>
Napi::Value NameOf(const Napi::CallbackInfo& info) {
  const int64_t value = Int64Arg(info[0], "value");
  const char* name =
      value < INT_MIN || value > INT_MAX ? nullptr : name_of(static_cast<int>(value));
  return name == nullptr ? info.Env().Null() : Napi::String::New(info.Env(), name);
}

// configDescribe(index) -> rl_config_describe: [name, description], null
// past the last.
Napi::Value ConfigDescribe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int64_t index = Int64Arg(info[0], "index");
  const char* description = nullptr;
  const char* name =
      index < 0 ? nullptr : rl_config_describe(static_cast<size_t>(index), &description);
  if (name == nullptr) return env.Null();
  Napi::Array pair = Napi::Array::New(env, 2);
  pair.Set(0u, Napi::String::New(env, name));
  pair.Set(1u, Napi::String::New(env, description != nullptr ? description : ""));
  return pair;
}

// settingDescribe(index) -> rl_setting_describe: { name, scope, kind,
// choices, defaultValue, description, rangeMin, rangeMax, secret } (null
// where the C struct has NULL); throws RL_E_INVALID_ARG past the last one.
Napi::Value SettingDescribe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int64_t index = Int64Arg(info[0], "index");
  rl_setting_info s = RL_SETTING_INFO_INIT;
  rl_error* err = nullptr;
  ThrowIfFailed(
      env, rl_setting_describe(index < 0 ? SIZE_MAX : static_cast<size_t>(index), &s, &err), err);
  auto text = [&](const char* t) -> Napi::Value {
    return t == nullptr ? env.Null() : Napi::String::New(env, t);
  };
  Napi::Object out = Napi::Object::New(env);
  out.Set("name", text(s.name));
  out.Set("scope", text(s.scope));
  out.Set("kind", text(s.kind));
  out.Set("choices", text(s.choices));
  out.Set("defaultValue", text(s.default_value));
  out.Set("description", text(s.description));
  out.Set("rangeMin", Napi::BigInt::New(env, s.range_min));
  out.Set("rangeMax", Napi::BigInt::New(env, s.range_max));
  out.Set("secret", Napi::Boolean::New(env, s.secret != 0));
  return out;
}

// statusIsOutage(status) -> rl_status_is_outage: the failures on_failure acts on.
Napi::Value StatusIsOutage(const Napi::CallbackInfo& info) {
  const int64_t status = Int64Arg(info[0], "status");
  return Napi::Boolean::New(info.Env(), rl_status_is_outage(static_cast<int>(status)) != 0);
}

Napi::Object Ops(Napi::Env env) {
  Napi::Object ops = Napi::Object::New(env);
  ops.Set("acquire", Napi::Number::New(env, RL_OP_ACQUIRE));
  ops.Set("peek", Napi::Number::New(env, RL_OP_PEEK));
  ops.Set("refund", Napi::Number::New(env, RL_OP_REFUND));
  ops.Set("reset", Napi::Number::New(env, RL_OP_RESET));
  return ops;
}

}  // namespace
}  // namespace rlnode

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  using namespace rlnode;
  auto* data = new AddonData();
  env.SetInstanceData(data);
  auto decision = Napi::Float64Array::New(env, DecisionFields);
  data->decision = Napi::Persistent(decision);
  data->decision_data = decision.Data();
  auto add = [&](const char* name, Napi::Function::Callback fn) {
    exports.Set(name, Napi::Function::New(env, fn, name));
  };
  add("init", Init);
  exports.Set("decision", decision);
  exports.Set("maxKeyLength", Napi::Number::New(env, RL_MAX_KEY_LEN));
  exports.Set("ops", Ops(env));
  add("version", [](const Napi::CallbackInfo& info) -> Napi::Value {
    return Napi::String::New(info.Env(), rl_version());
  });
  add("statusName", NameOf<rl_status_name>);
  add("statusIsOutage", StatusIsOutage);
  add("sourceName", NameOf<rl_source_name>);
  add("breakerStateName", NameOf<rl_breaker_state_name>);
  add("headerName", NameOf<rl_header_name>);
  add("configDescribe", ConfigDescribe);
  add("settingDescribe", SettingDescribe);
  add("headerRendererNew", HeaderRenderer::New);
  add("headerRendererRender", HeaderRenderer::Render);
  add("storeOpen", Store::Open);
  add("storeClose", Store::Close);
  add("storeClockSet", Store::ClockSet);
  add("storeClockAdvance", Store::ClockAdvance);
  add("storeDescribe", Store::Describe);
  add("storeDisplayUrl", Store::DisplayUrl);
  add("storeGetStats", Store::GetStats);
  add("storeMetrics", Store::Metrics);
  add("limiterNew", Limiter::New);
  add("limiterName", Limiter::Name);
  add("limiterLimits", Limiter::Limits);
  add("limiterAcquire", Limiter::Acquire);
  add("limiterPeek", Limiter::Peek);
  add("limiterRefund", Limiter::Refund);
  add("limiterReset", Limiter::Reset);
  add("limiterAcquireBatch", Limiter::AcquireBatch);
  add("limiterAcquireBatchEach", Limiter::AcquireBatchEach);
  add("limiterCallAsync", Limiter::CallAsync);
  add("limiterAcquireWaitStart", Limiter::AcquireWaitStart);
  add("waitCancel", Limiter::WaitCancel);
  add("limiterAcquireBatchAsync", Limiter::AcquireBatchAsync);
  add("limiterAcquireBatchEachAsync", Limiter::AcquireBatchEachAsync);
  return exports;
}

NODE_API_MODULE(rl_native, InitModule)
