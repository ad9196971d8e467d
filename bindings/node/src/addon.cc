// The native module: one function per C ABI entry point the JS layer needs.
// lib/native.js loads it and calls init(RlError) once per environment.
#include <napi.h>
#include <rl/rl.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "addon_data.h"
#include "args.h"
#include "errors.h"
#include "limiter.h"
#include "store.h"

namespace rlnode {

AddonData& DataOf(Napi::Env env) {
  return *env.GetInstanceData<AddonData>();
}

namespace {

// init(RlError, decisionOf, lastDecision): see AddonData.
Napi::Value Init(const Napi::CallbackInfo& info) {
  if (!info[0].IsFunction() || !info[1].IsFunction() || !info[2].IsTypedArray() ||
      info[2].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
      info[2].As<Napi::Float64Array>().ElementLength() != 8) {
    ThrowTypeError(info.Env(), "init: needs RlError, decisionOf and a Float64Array(8)");
  }
  AddonData& data = DataOf(info.Env());
  data.rl_error = Napi::Persistent(info[0].As<Napi::Function>());
  data.decision_of = Napi::Persistent(info[1].As<Napi::Function>());
  data.last_decision = Napi::Persistent(info[2].As<Napi::Float64Array>());
  data.last_decision_data = info[2].As<Napi::Float64Array>().Data();
  return info.Env().Undefined();
}

// Every status name, indexed by its value: RlError codes come from here.
Napi::Value StatusNames(const Napi::CallbackInfo& info) {
  Napi::Array names = Napi::Array::New(info.Env());
  for (int status = 0; rl_status_name(status) != nullptr; ++status) {
    names.Set(status, Napi::String::New(info.Env(), rl_status_name(status)));
  }
  return names;
}

// Every source name (rl_source_name), indexed by its value.
Napi::Value SourceNames(const Napi::CallbackInfo& info) {
  Napi::Array names = Napi::Array::New(info.Env());
  for (int source = 0; rl_source_name(source) != nullptr; ++source) {
    names.Set(source, Napi::String::New(info.Env(), rl_source_name(source)));
  }
  return names;
}

// Every breaker-state name (rl_breaker_state_name), indexed by its value.
Napi::Value BreakerStateNames(const Napi::CallbackInfo& info) {
  Napi::Array names = Napi::Array::New(info.Env());
  for (int state = 0; rl_breaker_state_name(state) != nullptr; ++state) {
    names.Set(state, Napi::String::New(info.Env(), rl_breaker_state_name(state)));
  }
  return names;
}

// [[name, description], ...] of every setting librl knows.
Napi::Value Settings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array settings = Napi::Array::New(env);
  const char* description = nullptr;
  for (size_t i = 0; const char* name = rl_config_describe(i, &description); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, Napi::String::New(env, name));
    pair.Set(1u, Napi::String::New(env, description != nullptr ? description : ""));
    settings.Set(i, pair);
  }
  return settings;
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

// isOutage(status) -> rl_status_is_outage: the failures on_failure acts on.
Napi::Value IsOutage(const Napi::CallbackInfo& info) {
  const int64_t status = Int64Arg(info[0], "status");
  return Napi::Boolean::New(info.Env(), rl_status_is_outage(static_cast<int>(status)) != 0);
}

// Every header field name (rl_header_name), indexed by its rl_header value.
Napi::Value HeaderNames(const Napi::CallbackInfo& info) {
  Napi::Array names = Napi::Array::New(info.Env());
  for (int header = 0; rl_header_name(header) != nullptr; ++header) {
    names.Set(header, Napi::String::New(info.Env(), rl_header_name(header)));
  }
  return names;
}

// headersRender(name, [{limit, windowUs}, ...], allowed, remaining,
// retryAfterUs, resetAfterUs, limitIndex, source) -> rl_headers_render: the
// value of each header field, indexed by rl_header, null where not sent.
Napi::Value HeadersRender(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string name = StringArg(info[0], "name");
  if (!info[1].IsArray()) ThrowTypeError(env, "limits: must be an array of {limit, windowUs}");
  Napi::Array given = info[1].As<Napi::Array>();
  std::vector<rl_limit_info> limits;
  for (uint32_t i = 0; i < given.Length(); ++i) {
    Napi::Value limit = given.Get(i);
    if (!limit.IsObject()) ThrowTypeError(env, "limits: must be an array of {limit, windowUs}");
    Napi::Object l = limit.As<Napi::Object>();
    limits.push_back({Int64Arg(l.Get("limit"), "limits[].limit"),
                      Int64Arg(l.Get("windowUs"), "limits[].windowUs"), 0});
  }
  rl_decision decision = RL_DECISION_INIT;
  decision.allowed = info[2].ToBoolean() ? 1 : 0;
  decision.remaining = Int64Arg(info[3], "remaining");
  decision.retry_after_us = Int64Arg(info[4], "retryAfterUs");
  decision.reset_after_us = Int64Arg(info[5], "resetAfterUs");
  // Out of int32's range is beyond any limiter's limits: librl names it.
  decision.limit_index = static_cast<int32_t>(
      std::clamp<int64_t>(Int64Arg(info[6], "limitIndex"), INT32_MIN, INT32_MAX));
  decision.source =
      static_cast<int32_t>(std::clamp<int64_t>(Int64Arg(info[7], "source"), INT32_MIN, INT32_MAX));
  char* values[RL_HEADER_COUNT] = {};
  rl_error* err = nullptr;
  ThrowIfFailed(env,
                rl_headers_render(name.c_str(), limits.data(), limits.size(), &decision, values,
                                  RL_HEADER_COUNT, &err),
                err);
  Napi::Array out = Napi::Array::New(env, RL_HEADER_COUNT);
  for (uint32_t i = 0; i < RL_HEADER_COUNT; ++i) {
    out.Set(i, values[i] == nullptr ? env.Null() : Napi::String::New(env, values[i]));
    rl_string_free(values[i]);
  }
  return out;
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
  env.SetInstanceData(new AddonData());
  exports.Set("init", Napi::Function::New(env, Init, "init"));
  exports.Set("version", Napi::String::New(env, rl_version()));
  exports.Set("maxKeyLength", Napi::Number::New(env, RL_MAX_KEY_LEN));
  exports.Set("ops", Ops(env));
  exports.Set("statusNames", Napi::Function::New(env, StatusNames, "statusNames"));
  exports.Set("sourceNames", Napi::Function::New(env, SourceNames, "sourceNames"));
  exports.Set("breakerStateNames",
              Napi::Function::New(env, BreakerStateNames, "breakerStateNames"));
  exports.Set("settings", Napi::Function::New(env, Settings, "settings"));
  exports.Set("settingDescribe", Napi::Function::New(env, SettingDescribe, "settingDescribe"));
  exports.Set("open", Napi::Function::New(env, Store::Open, "open"));
  exports.Set("close", Napi::Function::New(env, Store::Close, "close"));
  exports.Set("clockSet", Napi::Function::New(env, Store::ClockSet, "clockSet"));
  exports.Set("clockAdvance", Napi::Function::New(env, Store::ClockAdvance, "clockAdvance"));
  exports.Set("describe", Napi::Function::New(env, Store::Describe, "describe"));
  exports.Set("stats", Napi::Function::New(env, Store::Stats, "stats"));
  exports.Set("metrics", Napi::Function::New(env, Store::Metrics, "metrics"));
  exports.Set("isOutage", Napi::Function::New(env, IsOutage, "isOutage"));
  exports.Set("headerNames", Napi::Function::New(env, HeaderNames, "headerNames"));
  exports.Set("headersRender", Napi::Function::New(env, HeadersRender, "headersRender"));
  exports.Set("limiterNew", Napi::Function::New(env, Limiter::New, "limiterNew"));
  exports.Set("call", Napi::Function::New(env, Limiter::Call, "call"));
  exports.Set("tryAcquire", Napi::Function::New(env, Limiter::TryAcquire, "tryAcquire"));
  exports.Set("batch", Napi::Function::New(env, Limiter::Batch, "batch"));
  exports.Set("batchEach", Napi::Function::New(env, Limiter::BatchEach, "batchEach"));
  exports.Set("limits", Napi::Function::New(env, Limiter::Limits, "limits"));
  exports.Set("name", Napi::Function::New(env, Limiter::Name, "name"));
  exports.Set("acquireWait", Napi::Function::New(env, Limiter::AcquireWait, "acquireWait"));
  exports.Set("abandonWait", Napi::Function::New(env, Limiter::AbandonWait, "abandonWait"));
  return exports;
}

NODE_API_MODULE(rl_native, InitModule)
