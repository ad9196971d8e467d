#include "pending_call.h"

#include <iterator>

#include "errors.h"
#include "store.h"

namespace rlnode {
namespace {

void Finish(PendingCall* call, rl_status status, const rl_error* err) {
  call->status = status;
  if (status != RL_OK) call->message = rl_error_message(err);
  call->store->Complete(call);
}

// Built through the C API alone: nothing throws when JS cannot run.
napi_value TryDecisionArray(napi_env env, const std::vector<rl_decision>& decisions) {
  napi_value buffer = nullptr;
  napi_value array = nullptr;
  void* data = nullptr;
  const size_t length = decisions.size() * DecisionFields;
  if (napi_create_arraybuffer(env, length * sizeof(double), &data, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_float64_array, length, buffer, 0, &array) != napi_ok) {
    return nullptr;
  }
  auto* out = static_cast<double*>(data);
  for (size_t i = 0; i < decisions.size(); ++i) PutDecision(out + i * DecisionFields, decisions[i]);
  return array;
}

// The three arguments of an Answer::each callback, into args.
bool TryEachArgs(napi_env env, const std::vector<rl_decision>& decisions,
                 const std::vector<rl_status>& statuses, const std::vector<std::string>& messages,
                 napi_value* args) {
  args[0] = TryDecisionArray(env, decisions);
  if (args[0] == nullptr ||
      napi_create_array_with_length(env, statuses.size(), &args[1]) != napi_ok ||
      napi_create_array_with_length(env, statuses.size(), &args[2]) != napi_ok) {
    return false;
  }
  for (size_t i = 0; i < statuses.size(); ++i) {
    napi_value status = nullptr;
    napi_value error = nullptr;
    if (statuses[i] == RL_OK) {
      if (napi_get_null(env, &error) != napi_ok) return false;
    } else if ((error = TryRlError(env, statuses[i], messages[i])) == nullptr) {
      return false;
    }
    if (napi_create_int32(env, statuses[i], &status) != napi_ok ||
        napi_set_element(env, args[1], i, status) != napi_ok ||
        napi_set_element(env, args[2], i, error) != napi_ok) {
      return false;
    }
  }
  return true;
}

}  // namespace

void PutDecision(double* out, const rl_decision& d) {
  out[0] = d.allowed;
  out[1] = static_cast<double>(d.limit);
  out[2] = static_cast<double>(d.remaining);
  out[3] = static_cast<double>(d.retry_after_us);
  out[4] = static_cast<double>(d.reset_after_us);
  out[5] = d.source;
  out[6] = d.limit_index;
  out[7] = d.suppression_factor;
}

Napi::Value DecisionArray(Napi::Env env, const std::vector<rl_decision>& decisions) {
  napi_value array = TryDecisionArray(env, decisions);
  if (array == nullptr) throw Napi::Error::New(env);
  return {env, array};
}

Napi::Array EachArray(Napi::Env env, const std::vector<rl_decision>& decisions,
                      const std::vector<rl_status>& statuses,
                      const std::vector<std::string>& messages) {
  napi_value args[3];
  if (!TryEachArgs(env, decisions, statuses, messages, args)) throw Napi::Error::New(env);
  Napi::Array out = Napi::Array::New(env, 3);
  for (uint32_t i = 0; i < 3; ++i) out.Set(i, Napi::Value(env, args[i]));
  return out;
}

bool PendingCall::Run(napi_env env) {
  napi_value args[1 + DecisionFields];
  size_t argc = 1;
  if (answer == Answer::each) {
    if (!TryEachArgs(env, decisions, statuses, messages, args)) return false;
    argc = 3;
  } else if (status != RL_OK) {
    if ((args[0] = TryRlError(env, status, message)) == nullptr) return false;
  } else {
    if (napi_get_null(env, &args[0]) != napi_ok) return false;
    if (answer == Answer::decisions) {
      if ((args[1] = TryDecisionArray(env, decisions)) == nullptr) return false;
      argc = 2;
    } else {
      double fields[DecisionFields];
      PutDecision(fields, decision);
      for (size_t i = 0; i < DecisionFields; ++i) {
        if (napi_create_double(env, fields[i], &args[1 + i]) != napi_ok) return false;
      }
      argc = 1 + DecisionFields;
    }
  }
  napi_value fn = nullptr;
  napi_value undefined = nullptr;
  if (napi_get_reference_value(env, callback, &fn) != napi_ok ||
      napi_get_undefined(env, &undefined) != napi_ok) {
    return false;
  }
  if (napi_call_function(env, undefined, fn, argc, args, nullptr) == napi_ok) return true;
  // Either JS cannot run any more (a worker being terminated: nothing is
  // pending), or the callback threw: its failure is reported as uncaught,
  // and the other completions go on.
  bool threw = false;
  napi_value error = nullptr;
  if (napi_is_exception_pending(env, &threw) != napi_ok || !threw ||
      napi_get_and_clear_last_exception(env, &error) != napi_ok) {
    return false;
  }
  napi_fatal_exception(env, error);
  return true;
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
