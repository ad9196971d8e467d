#include "header_renderer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "addon_data.h"
#include "args.h"
#include "errors.h"
#include "pending_call.h"

namespace rlnode {
namespace {

constexpr napi_type_tag kRendererTag = {0x5b0c3e9d71a24f86ULL, 0x9e2d4c6a8b1f3057ULL};

// Field i of the `decision` export as an integer: JS wrote it, so a value
// that is not one (NaN, a fraction) is a TypeError naming the field.
int64_t Field(Napi::Env env, const double* fields, size_t i, const char* what) {
  const double v = fields[i];
  if (std::trunc(v) != v || std::fabs(v) > 9007199254740991.0) {
    ThrowTypeError(env, std::string(what) + ": must be a safe integer");
  }
  return static_cast<int64_t>(v);
}

int32_t Int32Field(Napi::Env env, const double* fields, size_t i, const char* what) {
  // Out of int32's range is beyond any limiter's limits or sources: librl names it.
  return static_cast<int32_t>(
      std::clamp<int64_t>(Field(env, fields, i, what), INT32_MIN, INT32_MAX));
}

}  // namespace

Napi::Value HeaderRenderer::New(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = StringArg(info[0], "name");
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
  auto* renderer =
      new HeaderRenderer(std::move(name), std::move(limits), DataOf(env).decision_data);
  auto external = Napi::External<HeaderRenderer>::New(
      env, renderer, [](Napi::Env, HeaderRenderer* r) { delete r; });
  external.TypeTag(&kRendererTag);
  return external;
}

Napi::Value HeaderRenderer::Render(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  if (napi_get_value_external(env, info[0], &data) != napi_ok ||
      !info[0].As<Napi::External<HeaderRenderer>>().CheckTypeTag(&kRendererTag)) {
    ThrowTypeError(env, "renderer: is not an rl header renderer handle");
  }
  auto* r = static_cast<HeaderRenderer*>(data);
  const double* fields = r->decision_;  // pending_call.h's order
  rl_decision decision = RL_DECISION_INIT;
  decision.allowed = fields[0] != 0 ? 1 : 0;
  decision.remaining = Field(env, fields, 2, "remaining");
  decision.retry_after_us = Field(env, fields, 3, "retryAfterUs");
  decision.reset_after_us = Field(env, fields, 4, "resetAfterUs");
  decision.source = Int32Field(env, fields, 5, "source");
  decision.limit_index = Int32Field(env, fields, 6, "limitIndex");
  char* values[RL_HEADER_COUNT] = {};
  rl_error* err = nullptr;
  ThrowIfFailed(env,
                rl_headers_render(r->name_.c_str(), r->limits_.data(), r->limits_.size(), &decision,
                                  values, RL_HEADER_COUNT, &err),
                err);
  struct Freed {
    char** values;
    ~Freed() {
      for (size_t i = 0; i < RL_HEADER_COUNT; ++i) rl_string_free(values[i]);
    }
  } freed{values};
  const char* policy = values[RL_HEADER_RATELIMIT_POLICY];
  const char* rate_limit = values[RL_HEADER_RATELIMIT];
  if (std::none_of(values, values + RL_HEADER_COUNT, [](char* v) { return v != nullptr; })) {
    return env.Null();
  }
  const bool same_policy = policy != nullptr && r->sent_policy_ && r->policy_ == policy;
  // The usual admission: only RateLimit is new.
  if (same_policy && rate_limit != nullptr && values[RL_HEADER_RETRY_AFTER] == nullptr) {
    return Napi::String::New(env, rate_limit);
  }
  Napi::Array out = Napi::Array::New(env, RL_HEADER_COUNT);
  for (uint32_t i = 0; i < RL_HEADER_COUNT; ++i) {
    if (i == RL_HEADER_RATELIMIT_POLICY && same_policy) continue;  // JS has it
    out.Set(i, values[i] == nullptr ? env.Null() : Napi::String::New(env, values[i]));
  }
  r->sent_policy_ = policy != nullptr;
  if (policy != nullptr) r->policy_ = policy;
  return out;
}

}  // namespace rlnode
