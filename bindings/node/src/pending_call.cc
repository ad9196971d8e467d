#include "pending_call.h"

#include <iterator>

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

napi_value TryDecisionObject(napi_env env, const rl_decision& d) {
  const double fields[] = {
      static_cast<double>(d.allowed),        static_cast<double>(d.limit),
      static_cast<double>(d.remaining),      static_cast<double>(d.retry_after_us),
      static_cast<double>(d.reset_after_us), static_cast<double>(d.limit_index),
      static_cast<double>(d.source),         d.suppression_factor,
  };
  napi_value args[std::size(fields)];
  for (size_t i = 0; i < std::size(fields); ++i) {
    if (napi_create_double(env, fields[i], &args[i]) != napi_ok) return nullptr;
  }
  napi_value undefined = nullptr;
  napi_value decision = nullptr;
  if (napi_get_undefined(env, &undefined) != napi_ok ||
      napi_call_function(env, undefined, DataOf(env).decision_of.Value(), std::size(args), args,
                         &decision) != napi_ok) {
    return nullptr;
  }
  return decision;
}

Napi::Value DecisionObject(Napi::Env env, const rl_decision& d) {
  napi_value decision = TryDecisionObject(env, d);
  if (decision == nullptr) throw Napi::Error::New(env);
  return {env, decision};
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

napi_value TryDecisionArray(napi_env env, const std::vector<rl_decision>& decisions) {
  napi_value array = nullptr;
  if (napi_create_array_with_length(env, decisions.size(), &array) != napi_ok) return nullptr;
  for (size_t i = 0; i < decisions.size(); ++i) {
    napi_value decision = TryDecisionObject(env, decisions[i]);
    if (decision == nullptr || napi_set_element(env, array, i, decision) != napi_ok) return nullptr;
  }
  return array;
}

Napi::Array DecisionArray(Napi::Env env, const std::vector<rl_decision>& decisions) {
  napi_value array = TryDecisionArray(env, decisions);
  if (array == nullptr) throw Napi::Error::New(env);
  return {env, array};
}

// One entry of Promise.allSettled's array, built through the C API alone
// (nothing throws when JS cannot run).
napi_value TrySettled(napi_env env, const rl_decision& decision, rl_status status,
                      const std::string& message) {
  const bool ok = status == RL_OK;
  napi_value entry = nullptr;
  napi_value state = nullptr;
  const napi_value outcome =
      ok ? TryDecisionObject(env, decision) : TryRlError(env, status, message);
  if (outcome == nullptr || napi_create_object(env, &entry) != napi_ok ||
      napi_create_string_utf8(env, ok ? "fulfilled" : "rejected", NAPI_AUTO_LENGTH, &state) !=
          napi_ok ||
      napi_set_named_property(env, entry, "status", state) != napi_ok ||
      napi_set_named_property(env, entry, ok ? "value" : "reason", outcome) != napi_ok) {
    return nullptr;
  }
  return entry;
}

napi_value TrySettledArray(napi_env env, const std::vector<rl_decision>& decisions,
                           const std::vector<rl_status>& statuses,
                           const std::vector<std::string>& messages) {
  napi_value array = nullptr;
  if (napi_create_array_with_length(env, statuses.size(), &array) != napi_ok) return nullptr;
  for (size_t i = 0; i < statuses.size(); ++i) {
    napi_value entry = TrySettled(env, decisions[i], statuses[i], messages[i]);
    if (entry == nullptr || napi_set_element(env, array, i, entry) != napi_ok) return nullptr;
  }
  return array;
}

Napi::Array SettledArray(Napi::Env env, const std::vector<rl_decision>& decisions,
                         const std::vector<rl_status>& statuses,
                         const std::vector<std::string>& messages) {
  napi_value array = TrySettledArray(env, decisions, statuses, messages);
  if (array == nullptr) throw Napi::Error::New(env);
  return {env, array};
}

bool PendingCall::Settle(napi_env env) {
  napi_value value = nullptr;
  if (status != RL_OK) {
    value = TryRlError(env, status, message);
    return value != nullptr && napi_reject_deferred(env, deferred, value) == napi_ok;
  }
  switch (answer) {
    case Answer::decision: value = TryDecisionObject(env, decision); break;
    case Answer::nothing: napi_get_undefined(env, &value); break;
    case Answer::decisions: value = TryDecisionArray(env, decisions); break;
    case Answer::settled: value = TrySettledArray(env, decisions, statuses, messages); break;
  }
  return value != nullptr && napi_resolve_deferred(env, deferred, value) == napi_ok;
}

void OnDecision(void* user_data, rl_status status, const rl_decision* decision,
                const rl_error* err) {
  auto* call = static_cast<PendingCall*>(user_data);
  if (status == RL_OK) call->decision = *decision;
  Finish(call, status, err);
}

void OnDecisions(void* user_data, rl_status status, const rl_decision* decisions, size_t count,
                 const rl_error* err) {
  auto* call = static_cast<PendingCall*>(user_data);
  if (status == RL_OK) call->decisions.assign(decisions, decisions + count);
  Finish(call, status, err);
}

void OnEach(void* user_data, const rl_decision* decisions, const rl_status* statuses,
            const rl_error* const* errors, size_t count) {
  auto* call = static_cast<PendingCall*>(user_data);
  call->decisions.assign(decisions, decisions + count);
  call->statuses.assign(statuses, statuses + count);
  call->messages.resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (errors[i] != nullptr) call->messages[i] = rl_error_message(errors[i]);
  }
  Finish(call, RL_OK, nullptr);
}

}  // namespace rlnode
