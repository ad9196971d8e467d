#include "pending_call.h"

#include "addon_data.h"
#include "errors.h"
#include "store.h"

namespace rlnode {
namespace {

void Finish(PendingCall* call, rl_status status, const rl_error* err) {
  call->status = status;
  if (status != RL_OK) call->message = rl_error_message(err);
  call->store->Complete(call);
}

}  // namespace

Napi::Value DecisionObject(Napi::Env env, const rl_decision& d) {
  return DataOf(env).decision_of.Call({
      Napi::Number::New(env, d.allowed),
      Napi::Number::New(env, static_cast<double>(d.limit)),
      Napi::Number::New(env, static_cast<double>(d.remaining)),
      Napi::Number::New(env, static_cast<double>(d.retry_after_us)),
      Napi::Number::New(env, static_cast<double>(d.reset_after_us)),
      Napi::Number::New(env, d.limit_index),
      Napi::Number::New(env, d.source),
      Napi::Number::New(env, d.suppression_factor),
  });
}

void StoreLastDecision(Napi::Env env, const rl_decision& d) {
  double* out = DataOf(env).last_decision_data;
  out[0] = d.allowed;
  out[1] = static_cast<double>(d.limit);
  out[2] = static_cast<double>(d.remaining);
  out[3] = static_cast<double>(d.retry_after_us);
  out[4] = static_cast<double>(d.reset_after_us);
  out[5] = d.limit_index;
  out[6] = d.source;
  out[7] = d.suppression_factor;
}

Napi::Array DecisionArray(Napi::Env env, const std::vector<rl_decision>& decisions) {
  Napi::Array array = Napi::Array::New(env, decisions.size());
  for (size_t i = 0; i < decisions.size(); ++i) array.Set(i, DecisionObject(env, decisions[i]));
  return array;
}

void PendingCall::Settle(Napi::Env env) {
  napi_value value = nullptr;
  if (status != RL_OK) {
    value = MakeRlError(env, status, message);
    napi_reject_deferred(env, deferred, value);
    return;
  }
  switch (answer) {
    case Answer::decision: value = DecisionObject(env, decisions.at(0)); break;
    case Answer::nothing: value = env.Undefined(); break;
    case Answer::decisions: value = DecisionArray(env, decisions); break;
  }
  napi_resolve_deferred(env, deferred, value);
}

void OnDecision(void* user_data, rl_status status, const rl_decision* decision,
                const rl_error* err) {
  auto* call = static_cast<PendingCall*>(user_data);
  if (status == RL_OK) call->decisions.assign(decision, decision + 1);
  Finish(call, status, err);
}

void OnDecisions(void* user_data, rl_status status, const rl_decision* decisions, size_t count,
                 const rl_error* err) {
  auto* call = static_cast<PendingCall*>(user_data);
  if (status == RL_OK) call->decisions.assign(decisions, decisions + count);
  Finish(call, status, err);
}

}  // namespace rlnode
